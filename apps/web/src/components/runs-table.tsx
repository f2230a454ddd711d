"use client";

import { FINAL_RUN_STATUSES } from "@volley/contracts";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useEffect } from "react";
import { durationBetween, fmtDateTime, fmtDuration, fmtInt, fmtMs, fmtRelative } from "../lib/format";
import type { RunListItem } from "../lib/types";
import { StatusBadge } from "./status-badge";

/** The runs list; refreshes itself every 2 s while any run on it is still queued or running. */
export function RunsTable({ runs }: { runs: RunListItem[] }) {
  const router = useRouter();
  const active = runs.some((r) => !FINAL_RUN_STATUSES.includes(r.status));
  useEffect(() => {
    if (!active) return;
    const t = setInterval(() => router.refresh(), 2000);
    return () => clearInterval(t);
  }, [active, router]);

  return (
    <div className="panel flush">
      <table className="table runs-table">
        <thead>
          <tr>
            <th>Name</th>
            <th>Status</th>
            <th>Created</th>
            <th className="num">Duration</th>
            <th className="num">p95 latency</th>
            <th className="num">Sent</th>
            <th className="num">Received</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((r) => {
            const lost = r.summary?.lost ?? 0;
            return (
              <tr key={r.id}>
                <td>
                  <Link href={`/runs/${r.id}`} className="run-link">
                    {r.name}
                  </Link>
                  <div className="mono subtle">{r.id}</div>
                  {(r.baseline || r.tags.length > 0) && (
                    <div>
                      {r.baseline && <span className="badge baseline-badge">baseline</span>}{" "}
                      {r.tags.map((t) => (
                        <span key={t} className="tag-chip">
                          {t}
                        </span>
                      ))}
                    </div>
                  )}
                </td>
                <td>
                  <StatusBadge status={r.status} />
                  {r.reason && (r.status === "failed" || r.status === "errored" || r.status === "inconclusive") && (
                    <div className="reason-inline" title={r.reason}>
                      {r.reason}
                    </div>
                  )}
                </td>
                <td>
                  <time dateTime={r.createdAt} title={fmtDateTime(r.createdAt)} suppressHydrationWarning>
                    {fmtRelative(r.createdAt)}
                  </time>
                </td>
                <td className="num" suppressHydrationWarning>
                  {fmtDuration(durationBetween(r.startedAt, r.endedAt))}
                </td>
                <td className="num" title={r.summary?.measure === "delivery" ? "Delivery latency (this run timed no round trips)" : undefined}>
                  {fmtMs(r.summary?.p95)}
                  {r.summary?.measure === "delivery" && <div className="subtle small">delivery</div>}
                </td>
                <td className="num">{fmtInt(r.summary?.sent)}</td>
                <td className="num">
                  {fmtInt(r.summary?.received)}
                  {r.summary?.measure === "delivery" && <div className="subtle small">delivered</div>}
                  {lost > 0 && <div className="bad small">{fmtInt(lost)} lost</div>}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
