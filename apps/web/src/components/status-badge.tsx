import type { RunStatus } from "@volley/contracts";

const LABELS: Record<RunStatus, string> = {
  queued: "Queued",
  running: "Running",
  passed: "Passed",
  failed: "Failed",
  errored: "Errored",
  aborted: "Aborted",
  degraded: "Degraded",
  inconclusive: "Inconclusive",
};

export function StatusBadge({ status, large = false }: { status: RunStatus; large?: boolean }) {
  return (
    <span className={`badge badge-${status}${large ? " badge-lg" : ""}`} data-status={status}>
      {status === "running" && <span className="pulse" aria-hidden="true" />}
      {LABELS[status]}
    </span>
  );
}
