import { capacityJudged, type IntervalPoint, type Run, type RunAnalysis } from "@volley/contracts";
import type { ChartSeries } from "../components/timeline-chart";
import { stringify } from "yaml";
import { DASH, fmtDateTime, fmtDuration, fmtInt, fmtMs, fmtMsgRate, fmtPercent, fmtRate, fmtRateValue } from "./format";
import { headlineCards } from "./headline-cards";
import { describeConnections, describeScenario } from "./plan-describe";
import { runTimelines, type RunTimelines } from "./run-timelines";
import { spectrumChartSvg } from "./spectrum-chart-svg";
import { escapeHtml as e, svgChart, type SvgSeries } from "./svg-chart";
import { sweepChartSvg } from "./sweep-chart-svg";

const CHART = { width: 900, height: 220 };

const STYLE = `
:root{--text:#16191f;--muted:#5b6472;--border:#dfe2e7;--bad:#c81e1e;--good:#15803d}
*{box-sizing:border-box}
body{margin:0;background:#f5f6f8;color:var(--text);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif}
main{max-width:960px;margin:0 auto;padding:24px 20px 48px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;margin:0 0 8px}
.muted{color:var(--muted)}.bad{color:var(--bad)}.good{color:var(--good)}.mono{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px}
.facts{display:flex;flex-wrap:wrap;gap:4px 16px;color:var(--muted);margin:2px 0}
.status{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;vertical-align:middle;background:#eef0f3}
.status-passed{background:#e8f6ed;color:var(--good)}.status-failed,.status-errored{background:#fdecec;color:var(--bad)}.status-inconclusive,.status-degraded{background:#fdf3e2;color:#7a4500;border:1px dashed #e0b86a}
.reason{margin:10px 0;padding:8px 12px;border-radius:6px;background:#fdecec;color:#7a1414}
section{background:#fff;border:1px solid var(--border);border-radius:6px;padding:14px 16px;margin:14px 0;break-inside:avoid}
.cards{display:grid;grid-template-columns:repeat(4,1fr);gap:10px;margin:14px 0}
.card{background:#fff;border:1px solid var(--border);border-top:3px solid #c9ced6;border-radius:6px;padding:8px 10px;break-inside:avoid}
.card.tone-bad{border-top-color:var(--bad)}.card.tone-good{border-top-color:var(--good)}
.card .label{font-size:12px;color:var(--muted)}.card .value{font-size:20px;font-weight:600}.card.tone-bad .value{color:var(--bad)}
.card .detail{font-size:11.5px;color:var(--muted)}.card svg{display:block;width:100%;height:40px;margin-top:4px}
.chart svg{display:block;width:100%;height:auto}
.legend{display:flex;flex-wrap:wrap;gap:2px 14px;font-size:12px;color:var(--muted);margin-top:4px}
.legend i{display:inline-block;width:12px;height:3px;margin-right:5px;vertical-align:middle}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #eceef2;vertical-align:top}
th{font-weight:600;color:var(--muted)}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.grid2{display:grid;grid-template-columns:1fr 1fr;gap:14px;align-items:start}
ul.samples{margin:2px 0 0;padding-left:16px;color:var(--muted);font-size:12px}ul.samples li{overflow-wrap:anywhere}
pre{white-space:pre-wrap;font-size:12px;background:#f5f6f8;padding:10px;border-radius:6px}
footer{color:var(--muted);font-size:12px;margin-top:20px}
@media print{body{background:#fff}main{max-width:none;padding:0}section,.card{border-color:#ccc}@page{margin:14mm}}
`;

const svgSeries = (c: ChartSeries): SvgSeries => ({ label: c.label, values: c.values, color: c.color, dash: c.dash?.join(" ") });
const legendOf = (series: ChartSeries[]) =>
  series.map((c) => `<span><i style="background:${c.color}"></i>${e(c.label)}${c.runValue ? `: <b>${e(c.runValue)}</b>` : ""}</span>`).join("");

/**
 * One of the run page's timelines (run-timelines.ts) as inline SVG: the left-axis series on the
 * main chart with the plan's thresholds, and right-axis ones (connections; event-loop delay and send
 * lag) on a shorter chart under it, in their own unit. Series the page hides until clicked are
 * left out; stages or sweep steps are shaded, saturated seconds marked red along the top.
 */
function timelineSection(
  title: string,
  t: RunTimelines,
  series: ChartSeries[],
  opts: { thresholds?: { value: number; label: string; ok?: boolean }[]; yLabel: string; y2Label?: string },
): string {
  const shown = series.filter((c) => !c.hidden);
  const left = shown.filter((c) => c.axis !== "right");
  const right = shown.filter((c) => c.axis === "right");
  if (!shown.some((c) => c.values.some((v) => v !== null))) return "";
  const bands = [
    ...t.regions.map((r, i) => ({ from: r.from, to: r.to, label: r.label, fill: r.failed ? "#fdecec" : i % 2 ? "#f3f4f6" : "#f8fafc" })),
    ...t.x.flatMap((x, i) => (t.warmup[i] ? [{ from: x - 0.5, to: x + 0.5, fill: "#fef3c7" }] : [])),
    ...t.x.flatMap((x, i) => (t.saturated[i] ? [{ from: x - 0.5, to: x + 0.5, fill: "#dc2626", top: true }] : [])),
  ];
  const chart = (cs: ChartSeries[], unit: string, height: number, thresholds: { value: number; label: string; ok?: boolean }[] = []) =>
    svgChart({
      ...CHART,
      height,
      x: t.x,
      series: cs.map(svgSeries),
      thresholds,
      axes: true,
      bands,
      format: (v) => `${fmtRateValue(v)} ${unit}`.trim(),
      title: `${title}: ${unit}`,
    });
  const main = left.length > 0 ? chart(left, opts.yLabel, CHART.height, opts.thresholds) : "";
  const second = right.length > 0 ? chart(right, opts.y2Label ?? "", 120) : "";
  return `<section><h2>${e(title)}</h2><div class="chart" data-chart="${e(title)}">${main}${second}</div><div class="legend">${legendOf(shown)}</div></section>`;
}

const row = (label: string, value: string, cls = "") => `<tr><th>${e(label)}</th><td class="num ${cls}">${e(value)}</td></tr>`;

/**
 * A run as one self-contained HTML document: header, headline cards, the timelines as inline SVG
 * with the plan's thresholds drawn, the summary with error samples, thresholds, sweep steps, per
 * agent, and the plan. No script, stylesheet or font is fetched, so it opens offline and prints
 * as it shows. Every text from the run (names, URLs, server messages) is escaped.
 */
export function runReportHtml(run: Run, intervals: IntervalPoint[], analysis: RunAnalysis = { spectra: {}, agents: [] }, generatedAt = new Date()): string {
  const s = run.summary;
  const plan = run.plan;
  const t = runTimelines(run, intervals);
  const x = t.x;
  const agents = analysis.agents;
  const deliveryOnly = !!s?.deliveries && s.latency.count === 0;
  const rl = deliveryOnly ? s?.deliveries?.latency : s?.latency;

  const cards = headlineCards(run, intervals)
    .map((c) => {
      const spark = c.series?.some((v) => v !== null)
        ? svgChart({
            width: 200,
            height: 40,
            x,
            title: `${c.label} per second`,
            series: [{ label: c.label, values: c.series, color: "#2563eb" }],
            thresholds: c.thresholds.map((t) => ({ value: t.limit, label: t.expression, ok: t.ok })),
          })
        : "";
      const ts = c.thresholds
        .map(
          (t) =>
            `<div class="detail ${t.ok === false ? "bad" : t.ok ? "good" : ""}">${t.ok === false ? "✗" : t.ok ? "✓" : "–"} <span class="mono">${e(t.expression)}</span></div>`,
        )
        .join("");
      return `<div class="card${c.tone ? ` tone-${c.tone}` : ""}" data-card="${c.key}"><div class="label">${e(c.label)}</div><div class="value">${e(c.value)}</div>${c.detail ? `<div class="detail">${e(c.detail)}</div>` : ""}${spark}${ts}</div>`;
    })
    .join("");

  const saturatedSeconds = t.saturated.filter(Boolean).length;
  const charts = [
    timelineSection(`${t.deliveryOnly ? "Delivery latency" : "Latency"} (ms, from intended send time)`, t, t.latency, {
      thresholds: t.latencyThresholds,
      yLabel: "ms",
    }),
    timelineSection("Messages per second and connections", t, t.throughput, {
      thresholds: t.throughputThresholds,
      yLabel: "",
      y2Label: "connections",
    }),
    timelineSection(`Errors and disconnects${t.anyProblem ? "" : ": none"}`, t, t.problems, { yLabel: "" }),
    timelineSection(`Agent health${saturatedSeconds > 0 ? `: saturated in ${fmtInt(saturatedSeconds)} s` : ": not saturated"}`, t, t.health, {
      yLabel: "%",
      y2Label: "ms",
    }),
  ].join("");
  const spectrum = spectrumChartSvg(analysis.spectra);

  const errors = s
    ? Object.entries(s.errors)
        .filter(([, n]) => n > 0)
        .sort((a, b) => b[1] - a[1])
    : [];
  const errorRows = errors.length
    ? errors
        .map(([cls, n]) => {
          const samples = s?.errorSamples?.[cls] ?? [];
          return `<tr><th>${e(cls)}</th><td class="num bad">${fmtInt(n)}</td></tr>${samples.length ? `<tr><td colspan="2"><ul class="samples">${samples.map((t) => `<li class="mono">${e(t)}</li>`).join("")}</ul></td></tr>` : ""}`;
        })
        .join("")
    : `<tr><td class="muted" colspan="2">No errors</td></tr>`;

  const summary = s
    ? `<section><h2>Summary</h2>${s.leftOut ? `<p class="bad" data-left-out>${e(s.leftOut.message)}</p>` : ""}<div class="grid2"><table><tbody>
${row("Sent", fmtInt(s.messages.sent))}${deliveryOnly ? "" : row("Replies received", fmtInt(s.messages.received)) + row("Replies lost", fmtInt(s.messages.lost), s.messages.lost ? "bad" : "")}
${s.deliveries ? row("Deliveries due", fmtInt(s.deliveries.expected)) + row("Delivered", fmtInt(s.deliveries.received)) + row("Delivery ratio", fmtPercent(s.deliveries.ratio, 2)) : ""}
${row("Send rate", fmtRate(s.messages.sendRate))}${row("Latency p50 / p95 / p99", `${fmtMs(rl?.p50)} / ${fmtMs(rl?.p95)} / ${fmtMs(rl?.p99)}`)}${row("Latency max", fmtMs(rl?.max))}
${row("Connections opened", fmtInt(s.connect.opened))}${row("Connect failures", fmtInt(s.connect.failed), s.connect.failed ? "bad" : "")}${row("Connect p95", fmtMs(s.connect.latency.p95))}
${row("Send lag p99", fmtMs(s.sendLag.p99))}${row("Saturated seconds", fmtInt(s.intervals.saturated), s.intervals.saturated ? "bad" : "")}
</tbody></table><table><thead><tr><th>Errors by class</th><th class="num">Count</th></tr></thead><tbody>${errorRows}</tbody></table></div></section>`
    : `<section><h2>Summary</h2><p class="muted">No summary: nothing was measured.</p></section>`;

  const thresholds = s?.thresholds.length
    ? `<section><h2>Thresholds</h2><table><tbody>${s.thresholds.map((t) => `<tr><td class="${t.ok ? "good" : "bad"}">${t.ok ? "pass" : "fail"}</td><td class="mono">${e(t.expression)}</td><td>${e(t.message)}</td></tr>`).join("")}</tbody></table></section>`
    : "";

  const steps = s?.steps?.length
    ? `<section><h2>Latency vs messages per second</h2>${s.capacity ? `<p>Capacity at <b>${e(s.capacity.slo)}</b>: <b>${!capacityJudged(s.capacity) ? "not found" : s.capacity.rate === null ? "none" : `${s.capacity.lowerBound ? "≥ " : ""}${e(fmtMsgRate(s.capacity.rate))}${s.capacity.per === "connection" ? " per connection" : ""}`}</b>${!capacityJudged(s.capacity) ? " — no step could be judged, so the run is inconclusive" : s.capacity.agentSaturated ? ` — a lower bound: ${e(s.capacity.endedBy ?? "the search ended at a step the load generator limited")}` : s.capacity.lowerBound ? " — never broke" : ""}</p>` : ""}${sweepChartSvg(run)}<table aria-label="Sweep steps"><thead><tr><th class="num">Step</th><th class="num">Planned</th><th class="num">Sent/s</th><th class="num">Received/s</th><th class="num">p95</th><th class="num">p99</th><th>Result</th></tr></thead><tbody>${s.steps
        .map((st) => {
          const l = deliveryOnly ? st.delivery : st.latency;
          return `<tr><td class="num">${st.index + 1}</td><td class="num">${fmtRateValue(st.plannedRate)}</td><td class="num">${fmtRateValue(st.sendRate)}</td><td class="num">${fmtRateValue(st.receiveRate)}</td><td class="num">${fmtMs(l.p95)}</td><td class="num">${fmtMs(l.p99)}</td><td>${e(st.generatorLimited ? `agent-limited, not judged: ${st.generatorReason ?? "the agent was saturated"}` : st.failed ? `stopped: ${st.reason ?? "limit broken"}` : st.aborted ? "cut short" : "held")}</td></tr>`;
        })
        .join("")}</tbody></table></section>`
    : "";

  const agentTable = agents.length
    ? `<section><h2>Per agent</h2><table><thead><tr><th>Agent</th><th class="num">Sent</th><th class="num">Received</th><th class="num">Lost</th><th class="num">Errors</th><th class="num">p50</th><th class="num">p99</th><th class="num">CPU max</th><th>Health</th></tr></thead><tbody>${agents
        .map(
          (a) =>
            `<tr><td class="mono">${e(a.agentId)}</td><td class="num">${fmtInt(a.sent)}</td><td class="num">${fmtInt(a.received)}</td><td class="num">${fmtInt(a.lost)}</td><td class="num">${fmtInt(a.errors)}</td><td class="num">${fmtMs(a.latency.p50)}</td><td class="num">${fmtMs(a.latency.p99)}</td><td class="num">${Math.round(a.health.cpuMax)}%</td><td>${a.saturated > 0 ? `<span class="bad">saturated ${fmtInt(a.saturated)} s</span>` : "healthy"}</td></tr>`,
        )
        .join("")}</tbody></table></section>`
    : "";

  const took = run.startedAt && run.endedAt ? fmtDuration(Date.parse(run.endedAt) - Date.parse(run.startedAt)) : DASH;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${e(run.name)} — Volley run report</title><style>${STYLE}</style></head>
<body><main>
<h1>${e(run.name)} <span class="status status-${e(run.status)}" data-status="${e(run.status)}">${e(run.status)}</span></h1>
<div class="facts"><span class="mono">${e(run.id)}</span><span class="mono">${e(plan.target.url)}</span><span>${e(plan.target.protocol)}</span></div>
<div class="facts"><span>${e(describeConnections(plan))}</span><span>${e(describeScenario(plan))}</span></div>
<div class="facts"><span>started ${e(fmtDateTime(run.startedAt))}</span><span>ended ${e(fmtDateTime(run.endedAt))}</span><span>took ${e(took)}</span></div>
${run.reason && run.status !== "passed" ? `<div class="reason">${run.status === "inconclusive" ? "<b>Inconclusive:</b> " : ""}${e(run.reason)}</div>` : ""}
<div class="cards">${cards}</div>
${charts}
${spectrum ? `<section><h2>Percentile spectrum</h2>${spectrum}</section>` : ""}
${summary}
${thresholds}
${steps}
${agentTable}
<section><h2>Plan</h2><pre>${e(stringify(plan))}</pre></section>
<footer>Volley run report, generated ${e(generatedAt.toISOString())}. Self-contained: opens offline; print it from the browser.</footer>
</main></body></html>
`;
}
