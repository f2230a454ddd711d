import type { Logger } from "pino";
import type { AgentHello } from "@volley/contracts";
import type { AgentEnv } from "../env";
import { buildAgentHello } from "./agent-hello";
import { loadAgentIdentity, type AgentIdentity } from "./agent-identity";

/**
 * What the daemon and `volley-agent check` both present to the hub: the hello, with the identity
 * kept in AGENT_STATE_DIR, so a check run by the installer and the service after it are one agent
 * (one row on the Agents page). Null when AGENT_TOKEN is missing: the caller says so and exits.
 */
export function agentHelloFromEnv(env: AgentEnv, log: Logger): { hello: AgentHello; identity: AgentIdentity | null } | null {
  if (!env.AGENT_TOKEN) return null;
  let identity: AgentIdentity | null = null;
  try {
    identity = loadAgentIdentity(env.AGENT_STATE_DIR);
  } catch (err) {
    // Still a working agent, as before persisted ids: only its restarts show up as new agents.
    log.warn(
      { err: err instanceof Error ? err.message : String(err) },
      `cannot keep this agent's identity in AGENT_STATE_DIR=${env.AGENT_STATE_DIR}; each restart will be listed as a new agent — set AGENT_STATE_DIR to a writable directory`,
    );
  }
  const hello = buildAgentHello({
    token: env.AGENT_TOKEN,
    name: env.AGENT_NAME,
    pool: env.AGENT_POOL,
    maxConnections: env.AGENT_MAX_CONNECTIONS,
    sourceAddresses: env.AGENT_SOURCE_ADDRESSES,
    agentKey: identity?.agentKey,
    workers: env.AGENT_WORKERS,
  });
  return { hello, identity };
}

export const MISSING_TOKEN =
  "AGENT_TOKEN is not set — set it to a join token (web: Agents → Add agent prints the line with one) or to the hub's bootstrap AGENT_TOKEN (npm start keeps it in .volley/agent-token)";
