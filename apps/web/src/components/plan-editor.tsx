"use client";

import { durationMs, parsePlanDocument, type FieldIssue, type Plan } from "@volley/contracts";
import { useRouter } from "next/navigation";
import { useDeferredValue, useMemo, useRef, useState, type KeyboardEvent } from "react";
import { parse as parseYaml } from "yaml";
import { ApiRequestError, apiFetch } from "../lib/api-client";
import { fmtDuration, fmtInt } from "../lib/format";

type SubmitState =
  | { kind: "idle" }
  | { kind: "submitting" }
  | { kind: "rejected"; message: string; issues: FieldIssue[] }
  | { kind: "failed"; message: string };

function describePlan(plan: Plan): string {
  const s = plan.scenario;
  const rate = `${fmtInt(s.message.rate)} msg/s ${s.message.per === "connection" ? "per connection" : "in aggregate"}`;
  const warm = durationMs(s.warmup) > 0 ? `, first ${fmtDuration(durationMs(s.warmup))} warm-up` : "";
  return `${fmtInt(plan.connections.count)} ${plan.target.protocol} connection${plan.connections.count === 1 ? "" : "s"} (opened at ${fmtInt(plan.connections.rate)}/s) to ${plan.target.url}; ${s.kind}, ${rate} of ${fmtInt(s.message.bytes)} bytes for ${fmtDuration(durationMs(s.duration))}${warm}.`;
}

export function PlanEditor({ initialText }: { initialText: string }) {
  const router = useRouter();
  const [text, setText] = useState(initialText);
  const [submit, setSubmit] = useState<SubmitState>({ kind: "idle" });
  const deferred = useDeferredValue(text);
  const result = useMemo(() => parsePlanDocument(deferred), [deferred]);
  const gutterRef = useRef<HTMLPreElement>(null);
  const lineCount = text.split("\n").length;

  const run = async () => {
    const checked = parsePlanDocument(text);
    if (!checked.ok || submit.kind === "submitting") return;
    setSubmit({ kind: "submitting" });
    try {
      // Send the document as written; the server validates it again and fills defaults itself.
      const { id } = await apiFetch<{ id: string }>("/api/v1/runs", { method: "POST", body: JSON.stringify({ plan: parseYaml(text) as unknown }) });
      router.push(`/runs/${id}`);
    } catch (err) {
      if (err instanceof ApiRequestError && err.status === 400) setSubmit({ kind: "rejected", message: err.message, issues: err.issues });
      else setSubmit({ kind: "failed", message: err instanceof Error ? err.message : String(err) });
    }
  };

  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === "Enter" && (e.metaKey || e.ctrlKey)) {
      e.preventDefault();
      void run();
    } else if (e.key === "Tab" && !e.shiftKey && !e.altKey && !e.metaKey && !e.ctrlKey) {
      e.preventDefault();
      const el = e.currentTarget;
      el.setRangeText("  ", el.selectionStart, el.selectionEnd, "end");
      setText(el.value);
    }
  };

  const stale = deferred !== text;
  return (
    <div className="editor-layout">
      <div className="editor-wrap">
        <pre className="editor-gutter" ref={gutterRef} aria-hidden="true">
          {Array.from({ length: lineCount }, (_, i) => i + 1).join("\n")}
        </pre>
        <textarea
          className="editor"
          value={text}
          onChange={(e) => {
            setText(e.target.value);
            if (submit.kind === "rejected" || submit.kind === "failed") setSubmit({ kind: "idle" });
          }}
          onKeyDown={onKeyDown}
          onScroll={(e) => {
            if (gutterRef.current) gutterRef.current.scrollTop = e.currentTarget.scrollTop;
          }}
          spellCheck={false}
          autoCapitalize="off"
          autoComplete="off"
          autoCorrect="off"
          wrap="off"
          aria-label="Test plan (YAML)"
          aria-invalid={!result.ok}
        />
      </div>

      <aside className="editor-side">
        <div className={`panel check ${result.ok ? "check-ok" : "check-bad"}${stale ? " stale" : ""}`} aria-live="polite">
          {result.ok ? (
            <>
              <h2 className="panel-title">✓ Plan is valid</h2>
              <p className="small">{describePlan(result.plan)}</p>
              {result.plan.thresholds.length > 0 && (
                <p className="small">
                  Thresholds:{" "}
                  {result.plan.thresholds.map((t, i) => (
                    <code key={`${t}-${i}`} className="chip">
                      {t}
                    </code>
                  ))}
                </p>
              )}
            </>
          ) : (
            <>
              <h2 className="panel-title">
                {result.issues.length} problem{result.issues.length === 1 ? "" : "s"} to fix
              </h2>
              <IssueList issues={result.issues} />
            </>
          )}
        </div>

        <button type="button" className="button primary block" disabled={!result.ok || submit.kind === "submitting"} onClick={() => void run()}>
          {submit.kind === "submitting" ? "Starting…" : "Run"}
        </button>
        <p className="subtle small center">Ctrl+Enter runs the plan · Tab indents</p>

        {submit.kind === "rejected" && (
          <div className="panel panel-error" role="alert">
            <h2 className="panel-title">The server rejected the plan</h2>
            {submit.issues.length ? <IssueList issues={submit.issues} /> : <p className="panel-message">{submit.message}</p>}
          </div>
        )}
        {submit.kind === "failed" && (
          <div className="panel panel-error" role="alert">
            <h2 className="panel-title">The run could not be started</h2>
            <p className="panel-message">{submit.message}</p>
          </div>
        )}

        <details className="panel reference">
          <summary>Plan reference</summary>
          <dl className="small">
            <dt>target</dt>
            <dd>
              <code>url</code> (ws:// or wss://), <code>protocol: ws</code>, <code>connectTimeout</code>, <code>headers</code>
            </dd>
            <dt>connections</dt>
            <dd>
              <code>count</code>, <code>rate</code> (new connections per second)
            </dd>
            <dt>scenario</dt>
            <dd>
              <code>kind: echo</code>, <code>message</code> {"{ bytes, rate, per: connection|aggregate, arrival: constant|poisson, timeout }"},{" "}
              <code>duration</code>, <code>warmup</code>
            </dd>
            <dt>thresholds</dt>
            <dd>
              <code>latency.p95 &lt; 200ms</code>, <code>errors.rate &lt; 1%</code>, <code>messages.loss_rate &lt; 0.1%</code>, <code>connect.p95 &lt; 1s</code>
            </dd>
            <dt>Durations</dt>
            <dd>
              <code>500ms</code>, <code>10s</code>, <code>2m</code>, or a number of milliseconds
            </dd>
          </dl>
        </details>
      </aside>
    </div>
  );
}

function IssueList({ issues }: { issues: FieldIssue[] }) {
  return (
    <ul className="issues">
      {issues.map((i, n) => (
        <li key={`${i.path}-${n}`}>
          <code className="issue-path">{i.path}</code> <span className={i.path === "(document)" ? "issue-message mono" : "issue-message"}>{i.message}</span>
        </li>
      ))}
    </ul>
  );
}
