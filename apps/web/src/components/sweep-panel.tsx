"use client";

import { capacityJudged, type Run } from "@volley/contracts";
import { fmtMs, fmtMsgRate, fmtRate, fmtRateValue } from "../lib/format";
import { stepLatency } from "../lib/sweep-curves";
import { SweepChart } from "./sweep-chart";

/** A sweep or capacity run: its capacity, the latency-vs-rate curve and every step. */
export function SweepPanel({ run }: { run: Run }) {
  const steps = run.summary?.steps ?? [];
  if (steps.length === 0) return null;
  const capacity = run.summary?.capacity;
  // A users sweep steps the arrival rate: its steps carry their users.
  const users = steps[0]!.users !== undefined;
  const unit = users ? "users/s" : steps[0]!.per === "connection" ? "msg/s per connection" : "msg/s";
  return (
    <section className="panel chart-panel" data-testid="sweep-panel">
      <h2 className="panel-title">{users ? "Step latency vs users arriving per second" : "Latency vs messages per second"}</h2>
      {capacity && (
        <p className="capacity" data-testid="capacity">
          Capacity at <strong>{capacity.slo}</strong> (the highest step that met this stop rule, ringed on the curve):{" "}
          {!capacityJudged(capacity) ? (
            <strong>
              not found — no step could be judged (
              {capacity.agentSaturated ? "the agent was the bottleneck from the first step" : "the first step was cut short"}), so the run is inconclusive
            </strong>
          ) : capacity.rate === null ? (
            <strong>none — the first step already broke it</strong>
          ) : (
            <>
              <strong>
                {capacity.lowerBound ? "≥ " : ""}
                {users ? `${fmtRateValue(capacity.rate)} users/s` : fmtMsgRate(capacity.rate)}
                {steps[0]!.per === "connection" ? " per connection" : ""}
              </strong>{" "}
              {users ? null : (
                <>
                  ({capacity.sendRate === null ? "—" : `${fmtRate(capacity.sendRate)} sent`}
                  {capacity.deliveryRate ? `, ${fmtRate(capacity.deliveryRate)} delivered` : ""})
                </>
              )}
              {capacity.lowerBound && !capacity.agentSaturated ? (
                <span className="muted"> — never broke: the server holds at least this; add steps to find where it breaks</span>
              ) : null}
            </>
          )}
          {capacity.agentSaturated ? (
            <span className="capacity-warn" data-testid="capacity-agent-saturated">
              {" "}
              Ended: {capacity.endedBy ?? "at a step the load generator limited, not the server"}. That step decides nothing,{" "}
              {capacity.rate === null ? "and no step before it held" : "so this is a lower bound"}: add agents and rerun.
            </span>
          ) : capacity.endedBy ? (
            <span className="muted" data-testid="capacity-ended-by">
              {" "}
              Ended: {capacity.endedBy}.
            </span>
          ) : null}
        </p>
      )}
      <SweepChart runs={[run]} />
      <div className="table-scroll">
        <table className="table" aria-label="Sweep steps">
          <thead>
            <tr>
              <th className="num">Step</th>
              <th className="num">Planned ({unit})</th>
              {users ? (
                <>
                  <th className="num">Users started</th>
                  <th className="num">Completed</th>
                  <th className="num">Failed</th>
                </>
              ) : (
                <>
                  <th className="num">Sent/s</th>
                  <th className="num">Received/s</th>
                  <th className="num">Deliveries/s</th>
                </>
              )}
              <th className="num">p50</th>
              <th className="num">p95</th>
              <th className="num">p99</th>
              <th className="num">Lost</th>
              <th>Result</th>
            </tr>
          </thead>
          <tbody>
            {steps.map((s) => {
              const l = stepLatency(s);
              return (
                <tr key={s.index} className={s.failed ? "step-failed" : s.generatorLimited ? "step-limited" : undefined}>
                  <td className="num">{s.index + 1}</td>
                  <td className="num">{fmtRateValue(s.plannedRate)}</td>
                  {s.users ? (
                    <>
                      <td className="num">{s.users.started}</td>
                      <td className="num">{s.users.completed}</td>
                      <td className={`num${s.users.failed > 0 ? " bad" : ""}`}>{s.users.failed}</td>
                    </>
                  ) : (
                    <>
                      <td className="num">{fmtRateValue(s.sendRate)}</td>
                      <td className="num">{fmtRateValue(s.receiveRate)}</td>
                      <td className="num">{s.deliveryRate ? fmtRateValue(s.deliveryRate) : "—"}</td>
                    </>
                  )}
                  <td className="num">{fmtMs(l.p50)}</td>
                  <td className="num">{fmtMs(l.p95)}</td>
                  <td className="num">{fmtMs(l.p99)}</td>
                  <td className="num">{s.lost}</td>
                  <td>
                    {s.generatorLimited
                      ? `agent-limited, not judged: ${s.generatorReason ?? "the agent was saturated"}`
                      : s.failed
                        ? `stopped: ${s.reason ?? "limit broken"}`
                        : s.aborted
                          ? "cut short"
                          : s.saturated
                            ? "held (agent saturated)"
                            : "held"}
                    {(s.attempts ?? 1) > 1 ? (
                      <span className="muted">
                        {" "}
                        · run {s.attempts} times; retried because {s.retryReason ?? "the agent was saturated"}
                      </span>
                    ) : null}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </section>
  );
}
