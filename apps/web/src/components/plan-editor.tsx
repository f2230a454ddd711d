"use client";

import { durationMs, parsePlanDocument, thresholdExpression, userConnections, type FieldIssue, type Plan, type PreflightWarning } from "@volley/contracts";
import { useRouter } from "next/navigation";
import { useDeferredValue, useEffect, useMemo, useState } from "react";
import { parse as parseYaml, stringify } from "yaml";
import { ApiRequestError, apiFetch } from "../lib/api-client";
import { fmtDuration, fmtInt, fmtMsgRate } from "../lib/format";
import { describeConnections, describeScenario } from "../lib/plan-describe";
import { FlowSteps } from "./flow-steps";
import { PlanForm } from "./plan-form";
import { YamlEditor } from "./yaml-editor";

type SubmitState =
  | { kind: "idle" }
  | { kind: "submitting" }
  | { kind: "rejected"; message: string; issues: FieldIssue[] }
  | { kind: "failed"; message: string };

function describePlan(plan: Plan): string {
  const s = plan.scenario;
  const rate = `${fmtMsgRate(s.message.rate)} ${s.message.per === "connection" ? "per connection" : "in aggregate"}`;
  const warm = durationMs(s.warmup) > 0 ? `, first ${fmtDuration(durationMs(s.warmup))} warm-up` : "";
  // A flow's messages are its own templates: message.bytes sizes only Volley's own messages.
  const kinds = plan.flow?.messages;
  const what = kinds ? `of ${kinds.length === 1 ? "the flow's message" : `the flow's ${kinds.length} message kinds`}` : `of ${fmtInt(s.message.bytes)} bytes`;
  const setup = plan.flow && plan.flow.setup.length > 0 ? `, after ${plan.flow.setup.length} setup step${plan.flow.setup.length === 1 ? "" : "s"}` : "";
  if (s.kind === "users") {
    const links = [...userConnections(plan).values()];
    const holds = links.length > 1 ? `; each user holds ${links.map((c) => `${c.name} (${c.protocol})`).join(", ")}` : "";
    return `${plan.target.protocol} to ${plan.target.url}: ${describeScenario(plan)}, ${describeConnections(plan)}${warm}${holds}.`;
  }
  return `${plan.target.protocol} to ${plan.target.url}: ${describeConnections(plan)}; ${s.kind}, ${rate} ${what} for ${fmtDuration(durationMs(s.duration))}${setup}${warm}.`;
}

interface PlanEditorProps {
  initialText: string;
  /** A saved plan: Save writes its next version, Run saves first when changed, then runs it by id. */
  saved?: { id: string; version: number };
  /** Offer "Save plan" (a new saved plan) next to Run. */
  canSave?: boolean;
}

export function PlanEditor({ initialText, saved, canSave = false }: PlanEditorProps) {
  const router = useRouter();
  const [text, setText] = useState(initialText);
  const [savedText, setSavedText] = useState(initialText);
  const [saveState, setSaveState] = useState<SubmitState>({ kind: "idle" });
  const [submit, setSubmit] = useState<SubmitState>({ kind: "idle" });
  const deferred = useDeferredValue(text);
  const result = useMemo(() => parsePlanDocument(deferred), [deferred]);
  const warnings = usePreflightWarnings(result.ok ? deferred : null);

  const dirty = text !== savedText;
  /** Saves the document: a new plan (then opens it) or the next version of this one. */
  const save = async (): Promise<boolean> => {
    if (!parsePlanDocument(text).ok) return false;
    setSaveState({ kind: "submitting" });
    try {
      // The text as written: the server keeps it (comments, order, no defaults) beside the plan it validates.
      const body = JSON.stringify({ yaml: text });
      if (saved) {
        await apiFetch(`/api/v1/plans/${saved.id}`, { method: "PUT", body });
        setSavedText(text);
        setSaveState({ kind: "idle" });
        router.refresh(); // the version history
      } else {
        const record = await apiFetch<{ id: string }>("/api/v1/plans", { method: "POST", body });
        router.push(`/plans/${record.id}`);
      }
      return true;
    } catch (err) {
      if (err instanceof ApiRequestError && err.status === 400) setSaveState({ kind: "rejected", message: err.message, issues: err.issues });
      else setSaveState({ kind: "failed", message: err instanceof Error ? err.message : String(err) });
      return false;
    }
  };

  const run = async () => {
    const checked = parsePlanDocument(text);
    if (!checked.ok || submit.kind === "submitting") return;
    if (saved && dirty && !(await save())) return;
    setSubmit({ kind: "submitting" });
    try {
      // Send the document as written; the server validates it again and fills defaults itself.
      const body = saved ? { planId: saved.id } : { plan: parseYaml(text) as unknown };
      const { id } = await apiFetch<{ id: string }>("/api/v1/runs", { method: "POST", body: JSON.stringify(body) });
      router.push(`/runs/${id}`);
    } catch (err) {
      if (err instanceof ApiRequestError && err.status === 400) setSubmit({ kind: "rejected", message: err.message, issues: err.issues });
      else setSubmit({ kind: "failed", message: err instanceof Error ? err.message : String(err) });
    }
  };

  const stale = deferred !== text;
  return (
    <div className="editor-layout">
      <div className="editor-wrap">
        <YamlEditor
          value={text}
          onChange={(next) => {
            setText(next);
            if (submit.kind === "rejected" || submit.kind === "failed") setSubmit({ kind: "idle" });
          }}
          onSubmit={() => void run()}
          label="Test plan (YAML)"
          invalid={!result.ok}
        />
      </div>

      <aside className="editor-side">
        <PlanForm text={text} plan={result.ok ? result.plan : null} onChange={setText} />
        <div className={`panel check ${result.ok ? "check-ok" : "check-bad"}${stale ? " stale" : ""}`} aria-live="polite">
          {result.ok ? (
            <>
              <h2 className="panel-title">✓ Plan is valid</h2>
              <p className="small">{describePlan(result.plan)}</p>
              {warnings.length > 0 && (
                <ul className="issues" data-testid="preflight-warnings">
                  {warnings.map((w) => (
                    <li key={w.code}>
                      <strong>Warning:</strong> {w.message}
                    </li>
                  ))}
                </ul>
              )}
              {result.plan.thresholds.length > 0 && (
                <p className="small">
                  Thresholds:{" "}
                  {result.plan.thresholds.map((t, i) => (
                    <code key={`${thresholdExpression(t)}-${i}`} className="chip">
                      {thresholdExpression(t)}
                      {typeof t !== "string" && t.abortOnFail ? " (abort on fail)" : ""}
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

        {result.ok && result.plan.flow && <FlowSteps flow={result.plan.flow} />}
        {result.ok && <EffectivePlan plan={result.plan} />}

        <button type="button" className="button primary block" disabled={!result.ok || submit.kind === "submitting"} onClick={() => void run()}>
          {submit.kind === "submitting" ? "Starting…" : saved && dirty ? "Save and run" : "Run"}
        </button>
        {(canSave || saved) && (
          <button
            type="button"
            className="button block"
            disabled={!result.ok || saveState.kind === "submitting" || (saved !== undefined && !dirty)}
            onClick={() => void save()}
          >
            {saveState.kind === "submitting"
              ? "Saving…"
              : saved
                ? dirty
                  ? `Save as version ${saved.version + 1}`
                  : `Saved (version ${saved.version})`
                : "Save plan"}
          </button>
        )}
        {(saveState.kind === "rejected" || saveState.kind === "failed") && (
          <div className="panel panel-error" role="alert">
            <h2 className="panel-title">The plan could not be saved</h2>
            {saveState.kind === "rejected" && saveState.issues.length ? (
              <IssueList issues={saveState.issues} />
            ) : (
              <p className="panel-message">{saveState.message}</p>
            )}
          </div>
        )}
        <p className="subtle small center">Ctrl+Enter runs the plan · Ctrl+Space completes a field</p>

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
              <code>url</code>, <code>protocol</code>: ws, socketio, sockjs, stomp, mqtt, sse, long-polling, short-polling, http or socketcluster (each with its
              own options block, e.g. <code>socketio: {"{ ack: true }"}</code>), <code>connectTimeout</code>, <code>headers</code>
            </dd>
            <dt>connections</dt>
            <dd>
              <code>count</code>, <code>rate</code> (new connections per second), or <code>stages</code> to ramp up and down
            </dd>
            <dt>scenario</dt>
            <dd>
              <code>kind</code>: echo, broadcast, groups, storm or http-rps; <code>message</code>{" "}
              {"{ bytes, rate, per: connection|aggregate, arrival: constant|poisson, timeout }"}, <code>duration</code>, <code>warmup</code>
            </dd>
            <dt>thresholds</dt>
            <dd>
              <code>latency.p95 &lt; 200ms</code>, <code>errors.rate &lt; 1%</code>, <code>messages.loss_rate &lt; 0.1%</code>, <code>connect.p95 &lt; 1s</code>
              ; or <code>{'{ expression: "latency.p95 < 200ms", abortOnFail: true, delay: "10s" }'}</code> to stop the run as failed as soon as it breaks
            </dd>
            <dt>flow</dt>
            <dd>
              Talk to your application as it speaks: <code>setup</code> steps per connection (<code>request</code>, <code>connect</code>, <code>send</code>,{" "}
              <code>waitFor</code>, <code>think</code>), <code>messages</code> with templates like <code>{"{{ msg.id }}"}</code> and a <code>reply</code> rule,{" "}
              <code>data</code> rows or CSV; thresholds <code>messages.unmatched &lt; 10</code>, <code>setup.failed == 0</code>
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

/**
 * What the server's preflight says of a valid plan against the agents connected now (POST
 * /api/v1/plans/validate `warnings`: too few agents, agents likely saturated); re-asked half a second
 * after the document stops changing. Failures to ask show nothing: the plan itself is valid.
 */
function usePreflightWarnings(text: string | null): PreflightWarning[] {
  const [warnings, setWarnings] = useState<PreflightWarning[]>([]);
  useEffect(() => {
    if (text === null) return setWarnings([]);
    let cancelled = false;
    const timer = setTimeout(() => {
      apiFetch<{ warnings?: PreflightWarning[] }>("/api/v1/plans/validate", { method: "POST", body: JSON.stringify(parseYaml(text) as unknown) })
        .then((r) => !cancelled && setWarnings(r.warnings ?? []))
        .catch(() => !cancelled && setWarnings([]));
    }, 500);
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, [text]);
  return warnings;
}

/** The plan as it runs, every default filled in: shown beside the author's text, never written into it. */
function EffectivePlan({ plan }: { plan: Plan }) {
  const [open, setOpen] = useState(false);
  return (
    <details className="panel plan-doc" data-testid="effective-plan" onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>As it runs, with defaults</summary>
      {open && <pre className="code-block">{stringify(plan)}</pre>}
    </details>
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
