"use client";

import type { IntervalPoint, Run } from "@volley/contracts";
import { memo, useMemo } from "react";
import "../app/results.css";
import { headlineCards } from "../lib/headline-cards";
import { svgChart } from "../lib/svg-chart";

const CARD_COLORS: Record<string, string> = { rate: "#2563eb", connections: "#7c3aed", p95: "#d97706", p99: "#dc2626", errors: "#dc2626", loss: "#ea580c" };

/**
 * The run at a glance, above its charts: mean and peak messages/s, connections, p95 and p99,
 * error and loss rate, and a sweep's capacity. Each card draws its figure per second with the
 * plan's thresholds on it as dashed lines (red when failed).
 */
export const RunHeadline = memo(function RunHeadline({ run, intervals }: { run: Run; intervals: IntervalPoint[] }) {
  const cards = useMemo(() => headlineCards(run, intervals), [run, intervals]);
  const x = useMemo(() => intervals.map((p) => p.index - (intervals[0]?.index ?? 0)), [intervals]);
  if (!run.summary && intervals.length === 0) return null;
  return (
    <section className="headline-cards" data-testid="headline-cards" aria-label="Headline figures">
      {cards.map((c) => (
        <div key={c.key} className={`headline-card${c.tone ? ` tone-${c.tone}` : ""}`} data-card={c.key}>
          <div className="headline-label">{c.label}</div>
          <div className="headline-value" data-testid={`card-${c.key}`}>
            {c.value}
          </div>
          {c.detail && <div className="headline-detail small subtle">{c.detail}</div>}
          {c.series?.some((v) => v !== null) && (
            <div
              className="headline-chart"
              // biome-ignore lint/security/noDangerouslySetInnerHtml: our own SVG string; every text in it is escaped (svg-chart.ts).
              dangerouslySetInnerHTML={{
                __html: svgChart({
                  width: 220,
                  height: 44,
                  x,
                  title: `${c.label} per second`,
                  series: [{ label: c.label, values: c.series, color: CARD_COLORS[c.key] ?? "#2563eb" }],
                  thresholds: c.thresholds.map((t) => ({ value: t.limit, label: t.expression, ok: t.ok })),
                }),
              }}
            />
          )}
          {c.thresholds.length > 0 && (
            <div className="headline-thresholds small">
              {c.thresholds.map((t) => (
                <span
                  key={t.expression}
                  className={t.ok === false ? "bad" : t.ok ? "good" : "muted"}
                  title="A threshold of the plan, drawn dashed on the chart"
                >
                  {t.ok === false ? "✗" : t.ok ? "✓" : "–"} <span className="mono">{t.expression}</span>
                </span>
              ))}
            </div>
          )}
        </div>
      ))}
    </section>
  );
});
