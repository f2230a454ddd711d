import type { AgentStatus } from "@volley/contracts";

const LABELS: Record<AgentStatus, string> = { online: "Online", busy: "Busy", offline: "Offline" };

/** online = connected and idle, busy = running a shard, offline = disconnected or its heartbeat went stale. */
export function AgentStatusBadge({ status }: { status: AgentStatus }) {
  return (
    <span className={`badge badge-agent-${status}`} data-status={status}>
      {status === "busy" && <span className="pulse" aria-hidden="true" />}
      {LABELS[status]}
    </span>
  );
}
