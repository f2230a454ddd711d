"use client";

import type { Webhook, WebhookDelivery } from "@volley/contracts";
import { useState, type FormEvent } from "react";
import { apiFetch, ApiRequestError } from "../lib/api-client";
import { fmtDateTime } from "../lib/format";

const describe = (err: unknown) => (err instanceof ApiRequestError ? err.message : String(err));

/** One line per delivery attempt: when, what, the receiver's status (or why none), how long, and the start of its answer. */
function Deliveries({ deliveries }: { deliveries: WebhookDelivery[] }) {
  if (deliveries.length === 0) return <p className="small muted">No deliveries yet.</p>;
  return (
    <table className="table deliveries-table small" data-testid="deliveries">
      <thead>
        <tr>
          <th>When</th>
          <th>Event</th>
          <th className="num">Status</th>
          <th className="num">Time</th>
          <th>Answer</th>
        </tr>
      </thead>
      <tbody>
        {deliveries.map((d) => (
          <tr key={d.id} data-ok={d.ok}>
            <td suppressHydrationWarning>
              {fmtDateTime(d.at)}
              {d.attempt > 1 && <span className="subtle"> (attempt {d.attempt})</span>}
            </td>
            <td>
              {d.test ? "test" : d.event}
              {d.runId && (
                <>
                  {" "}
                  <a href={`/runs/${d.runId}`} className="mono subtle">
                    {d.runId}
                  </a>
                </>
              )}
            </td>
            <td className={d.ok ? "num good" : "num bad"}>{d.status ?? "—"}</td>
            <td className="num">{Math.round(d.durationMs)} ms</td>
            <td>
              {d.error && <div className="bad">{d.error}</div>}
              {d.responseExcerpt && <code className="mono response-excerpt">{d.responseExcerpt}</code>}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The org's webhooks: add (secret shown once), pick the format, send a test, see recent deliveries, delete. */
export function WebhooksManager({ initialWebhooks }: { initialWebhooks: Webhook[] }) {
  const [hooks, setHooks] = useState(initialWebhooks);
  const [created, setCreated] = useState<{ url: string; secret: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [deliveries, setDeliveries] = useState<Record<string, WebhookDelivery[]>>({});
  const [notice, setNotice] = useState<Record<string, string>>({});

  const reload = async () => setHooks((await apiFetch<{ webhooks: Webhook[] }>("/api/v1/webhooks")).webhooks);
  const loadDeliveries = async (id: string) => {
    const { deliveries: d } = await apiFetch<{ deliveries: WebhookDelivery[] }>(`/api/v1/webhooks/${id}/deliveries?limit=20`);
    setDeliveries((prev) => ({ ...prev, [id]: d }));
  };

  async function create(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const formEl = e.currentTarget;
    const form = new FormData(formEl);
    setBusy("create");
    setError(null);
    try {
      const res = await apiFetch<{ webhook: Webhook; secret: string }>("/api/v1/webhooks", {
        method: "POST",
        body: JSON.stringify({ url: String(form.get("url") ?? ""), format: String(form.get("format") ?? "generic"), events: ["run.finished"] }),
      });
      setCreated({ url: res.webhook.url, secret: res.secret });
      formEl.reset();
      await reload();
    } catch (err) {
      setError(describe(err));
    } finally {
      setBusy(null);
    }
  }

  async function test(hook: Webhook) {
    setBusy(hook.id);
    setNotice((n) => ({ ...n, [hook.id]: "Sending a test delivery…" }));
    try {
      const res = await apiFetch<{ deliveryId: string; delivery: WebhookDelivery | null }>(`/api/v1/webhooks/${hook.id}/test`, { method: "POST" });
      const d = res.delivery;
      setNotice((n) => ({
        ...n,
        [hook.id]: d
          ? d.ok
            ? `Test delivered: the receiver answered ${d.status} in ${Math.round(d.durationMs)} ms.`
            : `Test failed: ${d.error ?? `answered ${d.status}`}`
          : "Queued; no hub has sent it yet (is a hub running?). It will show below once sent.",
      }));
      await loadDeliveries(hook.id);
    } catch (err) {
      setNotice((n) => ({ ...n, [hook.id]: describe(err) }));
    } finally {
      setBusy(null);
    }
  }

  async function remove(hook: Webhook) {
    if (!window.confirm(`Delete the webhook to ${hook.url}? No delivery is sent to it from now on.`)) return;
    setError(null);
    try {
      await apiFetch(`/api/v1/webhooks/${hook.id}`, { method: "DELETE" });
      await reload();
    } catch (err) {
      setError(describe(err));
    }
  }

  const live = hooks.filter((h) => !h.disabledAt);
  return (
    <>
      <section className="panel">
        <h2 className="panel-title">Add a webhook</h2>
        <form className="inline-form" onSubmit={create}>
          <label>
            Receiver URL
            <input type="url" name="url" placeholder="https://hooks.slack.com/services/…" required maxLength={2000} size={48} />
          </label>
          <label>
            Format
            <select name="format" defaultValue="generic">
              <option value="generic">Generic JSON (Volley&apos;s run document)</option>
              <option value="slack">Slack-compatible message</option>
            </select>
          </label>
          <button type="submit" className="button primary" disabled={busy === "create"}>
            Add webhook
          </button>
        </form>
        <p className="small muted">
          Sent when a run ends (<code className="mono">run.finished</code>), signed with <code className="mono">x-volley-signature: sha256=…</code> (HMAC-SHA256
          of the body under the secret); non-2xx answers are retried 5 times.
        </p>
        {error && (
          <p className="bad" role="alert">
            {error}
          </p>
        )}
        {created && (
          <div className="banner" role="status">
            <p>
              Signing secret for <strong>{created.url}</strong> — copy it now, it is not shown again:
            </p>
            <code className="mono secret-once">{created.secret}</code>
          </div>
        )}
      </section>
      {live.length === 0 ? (
        <div className="panel empty">
          <p>No webhooks yet.</p>
        </div>
      ) : (
        live.map((h) => (
          <section key={h.id} className="panel webhook" data-webhook={h.id}>
            <h2 className="panel-title">
              <span className="mono">{h.url}</span> <span className="badge">{h.format === "slack" ? "Slack" : "JSON"}</span>
            </h2>
            <p className="small muted">
              {h.events.join(", ")} · added {fmtDateTime(h.createdAt)} · <span className="mono">{h.id}</span>
            </p>
            <div className="run-actions">
              <button type="button" className="button" onClick={() => test(h)} disabled={busy === h.id} data-testid="webhook-test">
                Send test delivery
              </button>
              <button type="button" className="button" onClick={() => loadDeliveries(h.id).catch((err: unknown) => setError(describe(err)))}>
                {deliveries[h.id] ? "Refresh deliveries" : "Show recent deliveries"}
              </button>
              <button type="button" className="button" onClick={() => remove(h)}>
                Delete
              </button>
            </div>
            {notice[h.id] && (
              <p className="small" role="status" data-testid="webhook-notice">
                {notice[h.id]}
              </p>
            )}
            {deliveries[h.id] && <Deliveries deliveries={deliveries[h.id]!} />}
          </section>
        ))
      )}
    </>
  );
}
