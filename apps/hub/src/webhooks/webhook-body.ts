import type { RunStatus, WebhookFormat, WebhookJob } from "@volley/contracts";

type Payload = WebhookJob["payload"];

const STATUS_MARK: Record<RunStatus, string> = {
  passed: ":white_check_mark:",
  failed: ":x:",
  errored: ":warning:",
  aborted: ":octagonal_sign:",
  degraded: ":large_orange_diamond:",
  inconclusive: ":grey_question:",
  queued: ":hourglass:",
  running: ":arrow_forward:",
};

const ms = (v: number | null | undefined) => (v === null || v === undefined ? "—" : v >= 100 ? `${Math.round(v)} ms` : `${v.toFixed(1)} ms`);
const rate = (v: number) => `${v >= 100 ? Math.round(v).toLocaleString("en-US") : v.toFixed(1)}/s`;

/**
 * The text a chat channel shows for an event: the run's name, status, reason and headline numbers.
 * Slack mrkdwn; `&`, `<` and `>` are escaped as Slack asks, so a run name cannot inject a link or mention.
 */
export function slackText(payload: Payload): string {
  const esc = (t: string) => t.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  if (payload.event === "webhook.test") return `:wave: Volley test delivery: ${esc(payload.message)}`;
  const { run } = payload;
  const lines = [`${STATUS_MARK[run.status]} Volley run *${esc(run.name)}* ${run.status}${run.reason ? `: ${esc(run.reason)}` : ""}`];
  const r = payload.restatement;
  if (r) lines.push(`_Corrected: ${esc(r.why)}; reported earlier as ${r.previous.status}${r.previous.reason ? ` (${esc(r.previous.reason)})` : ""}._`);
  const s = run.summary;
  if (s) {
    const lat = s.latency.count > 0 ? s.latency : s.deliveries?.latency;
    lines.push(`p95 ${ms(lat?.p95)} · p99 ${ms(lat?.p99)} · ${rate(s.messages.receiveRate)} received · ${s.messages.lost.toLocaleString("en-US")} lost`);
  }
  // Slack's link syntax: the URL is ours (VOLLEY_PUBLIC_URL + the run's id), `|` and `>` cannot occur in it.
  lines.push(run.url ? `<${run.url}|run \`${run.id}\`>` : `run \`${run.id}\``);
  return lines.join("\n");
}

/** The bytes POSTed for an event in the webhook's format: Volley's own JSON, or a Slack incoming-webhook message. */
export function webhookBody(format: WebhookFormat, payload: Payload): string {
  if (format === "slack") return JSON.stringify({ text: slackText(payload) });
  return JSON.stringify(payload);
}
