"use client";

import type { FieldIssue, ImportPlanBody, ImportPlanResponse } from "@volley/contracts";
import { useState, type FormEvent } from "react";
import { ApiRequestError, apiFetch } from "../lib/api-client";
import { slimHar } from "../lib/slim-har";
import { PlanEditor } from "./plan-editor";

type Format = ImportPlanBody["format"];

type State =
  | { kind: "idle" }
  | { kind: "importing" }
  | { kind: "rejected"; title: string; lines: string[] }
  | { kind: "imported"; fileName: string; format: Format; result: ImportPlanResponse };

const FORMAT_LABEL: Record<Format, string> = { har: "HAR recording", artillery: "Artillery script" };

/** The format a file most likely is: by its extension, else by its first character (a HAR is JSON). */
async function guessFormat(file: File): Promise<Format> {
  if (/\.(har|json)$/i.test(file.name)) return "har";
  if (/\.ya?ml$/i.test(file.name)) return "artillery";
  return (await file.slice(0, 256).text()).trimStart().startsWith("{") ? "har" : "artillery";
}

/** An API refusal in the words of this form: which field, then the server's reason. */
function describeRefusal(err: unknown, fileName: string): { title: string; lines: string[] } {
  if (!(err instanceof ApiRequestError)) return { title: "The import failed", lines: [err instanceof Error ? err.message : String(err)] };
  if (err.code === "payload_too_large") {
    return {
      title: "The file is too large to import",
      lines: [`${err.message}. Record a shorter session (only the log-in, the connect and a few messages), or raise VOLLEY_MAX_BODY_BYTES on the server.`],
    };
  }
  if (err.status !== 400) return { title: "The import failed", lines: [err.message] };
  const label = (i: FieldIssue) =>
    i.path === "content"
      ? fileName
      : i.path === "targetUrl"
        ? "Target URL"
        : i.path.startsWith("files")
          ? "Payload files"
          : i.path === "format"
            ? "Format"
            : i.path;
  return { title: `${fileName} could not be imported`, lines: err.issues.length ? err.issues.map((i) => `${label(i)}: ${i.message}`) : [err.message] };
}

/**
 * Import a plan (POST /api/v1/plans/import) from a HAR saved in the browser's DevTools or from an
 * Artillery script with its payload CSVs; the result opens in the plan editor here, nothing is
 * saved until the user saves it, with the importer's notes above it.
 */
export function PlanImport() {
  const [format, setFormat] = useState<Format>("har");
  const [state, setState] = useState<State>({ kind: "idle" });

  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const file = form.get("file");
    if (!(file instanceof File) || file.size === 0) {
      setState({ kind: "rejected", title: "No file chosen", lines: ["Choose a HAR file or an Artillery script to import."] });
      return;
    }
    setState({ kind: "importing" });
    try {
      const text = await file.text();
      const body: ImportPlanBody = { format, content: format === "har" ? slimHar(text) : text };
      const targetUrl = String(form.get("targetUrl") ?? "").trim();
      if (targetUrl !== "") body.targetUrl = targetUrl;
      if (format === "artillery") {
        const payloads = form.getAll("payloads").filter((f): f is File => f instanceof File && f.size > 0);
        if (payloads.length > 0) body.files = Object.fromEntries(await Promise.all(payloads.map(async (p) => [p.name, await p.text()] as const)));
      }
      const result = await apiFetch<ImportPlanResponse>("/api/v1/plans/import", { method: "POST", body: JSON.stringify(body) });
      setState({ kind: "imported", fileName: file.name, format, result });
    } catch (err) {
      setState({ kind: "rejected", ...describeRefusal(err, file.name) });
    }
  }

  if (state.kind === "imported") {
    const { notes, plan } = state.result;
    return (
      <div className="import-result">
        <div className="import-summary">
          <p className="small muted">
            Imported from <strong>{state.fileName}</strong> ({FORMAT_LABEL[state.format]}). Nothing is saved yet: review the plan, then save or run it.
          </p>
          <button type="button" className="button" onClick={() => setState({ kind: "idle" })}>
            Import another file
          </button>
        </div>
        {notes.length > 0 && (
          <section className="banner banner-warn import-notes" data-testid="import-notes" aria-label="Import notes">
            <strong>Check before you run</strong>
            <ul>
              {notes.map((n, i) => (
                <li key={i}>{n}</li>
              ))}
            </ul>
          </section>
        )}
        <PlanEditor key={plan} initialText={plan} canSave />
      </div>
    );
  }

  const busy = state.kind === "importing";
  return (
    <>
      <section className="panel import-panel">
        <form className="import-form" onSubmit={(e) => void submit(e)}>
          <label>
            File
            <input
              type="file"
              name="file"
              accept=".har,.json,.yml,.yaml,application/json"
              required
              onChange={(e) => {
                const file = e.currentTarget.files?.[0];
                if (file) void guessFormat(file).then(setFormat);
              }}
            />
          </label>
          <label>
            Format
            <select name="format" value={format} onChange={(e) => setFormat(e.target.value as Format)}>
              <option value="har">HAR recording (DevTools → Save all as HAR)</option>
              <option value="artillery">Artillery script (ws or socketio engine)</option>
            </select>
          </label>
          {format === "artillery" && (
            <label>
              <span>
                Payload CSV files <span className="subtle">(optional: those its config.payload names)</span>
              </span>
              <input type="file" name="payloads" accept=".csv,text/csv" multiple />
            </label>
          )}
          <label>
            <span>
              Target URL <span className="subtle">(optional: point the plan at this server instead of the recorded one)</span>
            </span>
            <input type="text" name="targetUrl" placeholder="ws://127.0.0.1:9010 or https://staging.example.com" spellCheck={false} autoComplete="off" />
          </label>
          <div>
            <button type="submit" className="button primary" disabled={busy}>
              {busy ? "Importing…" : "Import"}
            </button>
          </div>
        </form>
        {state.kind === "rejected" && (
          <div className="panel panel-error import-error" role="alert">
            <h2 className="panel-title">{state.title}</h2>
            {state.lines.map((l, i) => (
              <p key={i} className="panel-message">
                {l}
              </p>
            ))}
          </div>
        )}
      </section>
      <section className="panel import-help small">
        <h2 className="panel-title">Recording a HAR with its WebSocket messages</h2>
        <p>
          In Chrome or Edge, open DevTools on the Network panel and tick <strong>Preserve log</strong> <em>before</em> the page connects (reload it with the
          panel open), use the app for a moment (log in, join, send a few messages), then right-click the request list →{" "}
          <strong>Save all as HAR with content</strong>. The WebSocket frames are saved in the file (as <code>_webSocketMessages</code>); scripts and images are
          left out before upload.
        </p>
        <p>
          An Artillery script imports its <code>ws</code> or <code>socketio</code> scenario (flow, emit/response, think, loop); add the CSV files its{" "}
          <code>config.payload</code> names.
        </p>
      </section>
    </>
  );
}
