import type { AgentListItem } from "@volley/contracts";
import { DASH, fmtDateTime, fmtInt, fmtRelative } from "../lib/format";
import { AgentStatusBadge } from "./agent-status-badge";
import { RemoveAgentButton } from "./remove-agent-button";

const fmtMemory = (mb: number) => (mb >= 1024 ? `${(mb / 1024).toFixed(mb % 1024 === 0 ? 0 : 1)} GB` : `${mb} MB`);

/**
 * The org's agents as the hubs last reported them; `now` is the server's clock when the page rendered.
 * Admins (`canRemove`) get a Remove button on offline agents.
 */
export function AgentsTable({ agents, now, canRemove = false }: { agents: AgentListItem[]; now: number; canRemove?: boolean }) {
  // Ten columns: on a phone they scroll inside this box instead of widening the page.
  return (
    <div className="table-scroll">
      <table className="table" aria-label="Agents">
        <thead>
          <tr>
            <th>Name</th>
            <th>Pool</th>
            <th>Status</th>
            <th className="num">Cores</th>
            <th className="num">Memory</th>
            <th className="num">Max connections</th>
            <th>Source addresses</th>
            <th>Version</th>
            <th>Last seen</th>
            {canRemove && <th aria-label="Actions" />}
          </tr>
        </thead>
        <tbody>
          {agents.map((a) => (
            <tr key={a.id} data-agent={a.name} className={a.status === "offline" ? "subtle" : undefined}>
              <td>
                {a.name}
                {Object.keys(a.labels).length > 0 && (
                  <div className="small muted">
                    {Object.entries(a.labels)
                      .map(([k, v]) => `${k}=${v}`)
                      .join(", ")}
                  </div>
                )}
              </td>
              <td className="mono">{a.pool}</td>
              <td>
                <AgentStatusBadge status={a.status} />
              </td>
              <td className="num">{fmtInt(a.capacity.cores)}</td>
              <td className="num">{fmtMemory(a.capacity.memoryMb)}</td>
              <td className="num">{fmtInt(a.capacity.maxConnections)}</td>
              <td className="mono small">{a.capacity.sourceAddresses.length > 0 ? a.capacity.sourceAddresses.join(", ") : DASH}</td>
              <td className="mono">{a.version}</td>
              <td title={a.lastSeenAt ? fmtDateTime(a.lastSeenAt) : undefined}>{a.lastSeenAt ? fmtRelative(a.lastSeenAt, now) : "never"}</td>
              {canRemove && <td>{a.status === "offline" && <RemoveAgentButton id={a.id} name={a.name} />}</td>}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
