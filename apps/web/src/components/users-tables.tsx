import type { UsersSummary } from "@volley/contracts";
import { fmtInt, fmtMs, fmtPercent } from "../lib/format";
import { StepsTable } from "./steps-table";

/**
 * A users run's own results: how many users arrived and how they ended, their time in the
 * scenario, each connection's own counts when users held several, and each step's count,
 * failures and time from its intended instant.
 */
export function UsersTables({ users }: { users: UsersSummary }) {
  const failedPct = users.started > 0 ? (100 * users.failed) / users.started : 0;
  return (
    <div className="flow-tables" data-testid="users-summary">
      <div className="panel">
        <h3 className="panel-title">Users</h3>
        <dl className="stat-row" data-testid="users-counts">
          <div>
            <dt>Started</dt>
            <dd>{fmtInt(users.started)}</dd>
          </div>
          <div>
            <dt>Completed</dt>
            <dd>{fmtInt(users.completed)}</dd>
          </div>
          <div>
            <dt>Failed</dt>
            <dd className={users.failed > 0 ? "bad" : undefined}>
              {fmtInt(users.failed)} ({fmtPercent(failedPct, 1)})
            </dd>
          </div>
          <div>
            <dt title="Arrivals that found connections.count users busy: never started, never queued">Dropped</dt>
            <dd className={users.dropped > 0 ? "bad" : undefined}>{fmtInt(users.dropped)}</dd>
          </div>
          <div>
            <dt title="From each user's intended arrival to its leaving">Time p50 / p95 / max</dt>
            <dd>
              {fmtMs(users.time.p50)} / {fmtMs(users.time.p95)} / {fmtMs(users.time.max)}
            </dd>
          </div>
          {(users.reconnects.reconnected > 0 || users.reconnects.failed > 0) && (
            <div>
              <dt title="Connections reopened by their connect step's reconnect policy after the server closed them; time from each drop to its reconnect (p90: when 90 % of the dropped were back)">
                Reconnected (p50 / p90 / max)
              </dt>
              <dd className={users.reconnects.failed > 0 ? "bad" : undefined} data-testid="users-reconnects">
                {fmtInt(users.reconnects.reconnected)}
                {users.reconnects.failed > 0 && `, ${fmtInt(users.reconnects.failed)} gave up`} ({fmtMs(users.reconnects.time.p50)} /{" "}
                {fmtMs(users.reconnects.time.p90)} / {fmtMs(users.reconnects.time.max)})
              </dd>
            </div>
          )}
          {users.unsent > 0 && (
            <div>
              <dt title="Sends a user could not make because its connection was down">Not sent (disconnected)</dt>
              <dd className="bad">{fmtInt(users.unsent)}</dd>
            </div>
          )}
        </dl>
      </div>
      {users.connections && <ConnectionsTable connections={users.connections} />}
      <StepsTable
        caption="User steps"
        testId="users-steps"
        steps={users.steps}
        empty="No timed steps (think times, choices and disconnects are not timed)."
        hint="Timed from the step's intended instant (the arrival, or the previous step's end plus think time) to its end: a slow server shows here, not as fewer steps"
        errorPrefix="step."
      />
    </div>
  );
}

/** Users holding several connections: each one's opens, drops, reconnects and connect time, by name. */
function ConnectionsTable({ connections }: { connections: NonNullable<UsersSummary["connections"]> }) {
  return (
    <div className="panel flush">
      <table className="table" data-testid="users-connections">
        <caption>User connections</caption>
        <thead>
          <tr>
            <th>Connection</th>
            <th className="num">Opened</th>
            <th className="num">Dropped</th>
            <th className="num">Reconnected</th>
            <th className="num">Connect p50</th>
            <th className="num">p95</th>
            <th className="num">max</th>
          </tr>
        </thead>
        <tbody>
          {connections.map((c) => (
            <tr key={c.connection}>
              <th
                scope="row"
                className="mono"
                title={`The connection its connect step names ${c.connection} (main: the first, unnamed); metrics connections.opened.${c.connection}, connect.time.${c.connection}`}
              >
                {c.connection}
              </th>
              <td className="num">{fmtInt(c.opened)}</td>
              <td className={`num${c.dropped > 0 ? " bad" : ""}`}>{fmtInt(c.dropped)}</td>
              <td
                className={`num${c.reconnectFailed > 0 ? " bad" : ""}`}
                title={c.reconnectFailed > 0 ? `${c.reconnectFailed} drops after which every attempt failed` : undefined}
              >
                {fmtInt(c.reconnected)}
                {c.reconnectFailed > 0 && ` (${fmtInt(c.reconnectFailed)} gave up)`}
              </td>
              <td className="num">{fmtMs(c.connect.p50)}</td>
              <td className="num">{fmtMs(c.connect.p95)}</td>
              <td className="num">{fmtMs(c.connect.max)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
