import type { AgentListItem, AgentToken } from "@volley/contracts";
import type { Metadata } from "next";
import { headers } from "next/headers";
import { AgentTokensManager } from "../../components/agent-tokens-manager";
import { AgentsTable } from "../../components/agents-table";
import { ErrorPanel } from "../../components/error-panel";
import { PlainHttpNotice } from "../../components/plain-http-notice";
import { agentEndpoints, listAgents, listJoinTokens, type AgentEndpoints } from "@/server/agents/agents";
import { authorize } from "@/server/auth/auth";
import { ApiError } from "@/server/http/errors";
import { describeLoadError } from "@/server/http/page-errors";
import { pageSession } from "@/server/http/page-session";

export const metadata: Metadata = { title: "Agents" };

function isAdmin(auth: Awaited<ReturnType<typeof pageSession>>): boolean {
  try {
    authorize(auth, "org:admin");
    return true;
  } catch (err) {
    if (err instanceof ApiError) return false;
    throw err;
  }
}

export default async function AgentsPage() {
  const auth = await pageSession();
  const admin = isAdmin(auth);
  const now = Date.now();
  let agents: AgentListItem[] | null = null;
  let tokens: AgentToken[] = [];
  let endpoints: AgentEndpoints | null = null;
  let problem: ReturnType<typeof describeLoadError> | null = null;
  try {
    agents = await listAgents(auth.orgId);
    if (admin) {
      tokens = await listJoinTokens(auth.orgId);
      endpoints = agentEndpoints(await headers());
    }
  } catch (err) {
    problem = describeLoadError(err, "agents");
  }
  const counts = agents ? { online: agents.filter((a) => a.status === "online").length, busy: agents.filter((a) => a.status === "busy").length } : null;
  return (
    <div className="agents-page">
      <div className="page-head">
        <div>
          <h1>Agents</h1>
          <p className="muted">
            The machines that generate load. A run takes the idle agents of its plan&apos;s pool (<code className="mono">agents.pool</code>, default{" "}
            <code className="mono">default</code>).
            {counts && ` ${counts.online} idle, ${counts.busy} busy.`}
          </p>
        </div>
      </div>
      <PlainHttpNotice />
      {problem ? (
        <ErrorPanel title={problem.title} message={problem.message} />
      ) : agents && agents.length > 0 ? (
        <AgentsTable agents={agents} now={now} canRemove={admin} />
      ) : (
        <div className="panel empty">
          <h2 className="panel-title">No agents yet</h2>
          <p>
            An agent is a small process that opens the connections of a run and reports what it measured to the hub. Runs wait in the queue until an agent of
            their pool is online.
          </p>
          <p>
            {admin
              ? "To add one, create a join token under “Add agent” below and run the command it shows on the machine that should generate load — a Linux server, a Docker host or any machine with Node.js 20+. It appears here within seconds."
              : "Ask an admin or owner of your organization to add one: they create a join token on this page and run the command it shows on the machine that should generate load."}{" "}
            On a development machine, <code className="mono">npm start</code> at the repository root starts one agent for you.
          </p>
        </div>
      )}
      {admin && endpoints && <AgentTokensManager initialTokens={tokens} {...endpoints} />}
    </div>
  );
}
