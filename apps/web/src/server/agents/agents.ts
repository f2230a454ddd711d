import type { AgentListItem, AgentToken, CreateAgentTokenBody } from "@volley/contracts";
import { createAgentToken, listAgentStatuses, listAgentTokens, removeAgent, revokeAgentToken, type AgentTokenInfo } from "@volley/db";
import { networkInterfaces } from "node:os";
import { WEB_HUB_PREFIX } from "@volley/contracts";
import { hubPublicUrl, serverOptions } from "@/env";
import { isLoopbackHost, publicOrigin } from "../http/request-origin";
import type { AuthContext } from "../auth/auth";
import { ApiError, notFound } from "../http/errors";
import { getDb } from "../http/services";

/** An org's agents (as the hubs last reported them) and the join tokens that enrol new ones. */

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function toAgentToken(row: AgentTokenInfo): AgentToken {
  return {
    id: row.id,
    name: row.name,
    pool: row.pool,
    prefix: row.prefix,
    createdAt: row.createdAt.toISOString(),
    lastUsedAt: iso(row.lastUsedAt),
    revokedAt: iso(row.revokedAt),
  };
}

export async function listAgents(orgId: string): Promise<AgentListItem[]> {
  return listAgentStatuses(getDb(), orgId);
}

/**
 * Removes an offline agent from the org's list. Refused (409) while it carries a shard or is
 * connected: its hub still reports under that row. If the agent comes back, it enrolls anew.
 */
export async function removeOrgAgent(orgId: string, id: string): Promise<void> {
  const result = await removeAgent(getDb(), orgId, id);
  if (result.status === "not_found") throw notFound(`agent ${id}`);
  if (result.status === "busy") {
    const what = result.runId ? `a shard of run ${result.runId}` : "a shard";
    throw new ApiError(409, "conflict", `agent ${id} is busy with ${what}; wait for the run to end (or abort it), then remove the agent`);
  }
  if (result.status === "online") {
    throw new ApiError(
      409,
      "conflict",
      `agent ${id} is connected; stop the agent process (or revoke its join token) first — it is removable once it shows offline`,
    );
  }
}

export async function createJoinToken(auth: AuthContext, body: CreateAgentTokenBody): Promise<{ token: AgentToken; secret: string }> {
  const createdBy = auth.actor.kind === "user" ? auth.actor.userId : null;
  const { token, secret } = await createAgentToken(getDb(), { orgId: auth.orgId, name: body.name, pool: body.pool, createdBy });
  return { token: toAgentToken(token), secret };
}

export async function listJoinTokens(orgId: string): Promise<AgentToken[]> {
  return (await listAgentTokens(getDb(), orgId)).map(toAgentToken);
}

export async function revokeJoinToken(orgId: string, id: string): Promise<void> {
  if (!(await revokeAgentToken(getDb(), orgId, id))) throw notFound(`agent join token ${id}`);
}

/**
 * Where install commands point: web's public origin (serving /install-agent.sh and the agent
 * package) and the URL agents dial: VOLLEY_HUB_PUBLIC_URL, else web's own origin under /hub, which
 * web relays to the hub (hub-relay.ts), so a second host needs only the address this page was
 * opened at. `loopbackOnly`: the commands name an address only this machine reaches.
 */
export function agentEndpoints(headers: Pick<Headers, "get">): AgentEndpoints {
  const webOrigin = publicOrigin(headers);
  const hubUrl = hubPublicUrl() ?? `${webOrigin}${WEB_HUB_PREFIX}`;
  return {
    webOrigin,
    hubUrl,
    loopbackOnly: isLoopbackHost(new URL(webOrigin).hostname) || isLoopbackHost(new URL(hubUrl).hostname),
    otherAddresses: lanOrigins(serverOptions().port),
  };
}

export interface AgentEndpoints {
  webOrigin: string;
  hubUrl: string;
  loopbackOnly: boolean;
  /** This machine's own non-loopback addresses as web origins: what to open instead of a loopback one. */
  otherAddresses: string[];
}

/** This machine's non-loopback addresses at the port web listens on. */
function lanOrigins(port: number): string[] {
  const out: string[] = [];
  for (const addrs of Object.values(networkInterfaces())) {
    for (const a of addrs ?? []) {
      if (a.internal || a.address.startsWith("fe80")) continue;
      const host = a.family === "IPv4" ? a.address : `[${a.address}]`;
      out.push(`http://${host}:${port}`);
    }
  }
  return out.slice(0, 6);
}
