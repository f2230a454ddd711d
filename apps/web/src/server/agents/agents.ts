import type { AgentListItem, AgentToken, CreateAgentTokenBody } from "@volley/contracts";
import { createAgentToken, listAgentStatuses, listAgentTokens, removeAgent, revokeAgentToken, type AgentTokenInfo } from "@volley/db";
import { hubPublicUrl, publicUrl } from "@/env";
import type { AuthContext } from "../auth/auth";
import { ApiError, notFound } from "../http/errors";
import { getDb } from "../http/services";

/** An org's agents (as the hubs last reported them) and the join tokens that enrol new ones. */

/** The hub's default port (apps/hub env HUB_PORT), used when VOLLEY_HUB_PUBLIC_URL is unset. */
const HUB_DEFAULT_PORT = 3001;

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

/** The address the browser used (behind a proxy: its X-Forwarded-* headers). */
function requestUrl(headers: Headers): URL {
  const proto = headers.get("x-forwarded-proto")?.split(",")[0]?.trim() || "http";
  const host = headers.get("x-forwarded-host")?.split(",")[0]?.trim() || headers.get("host") || "localhost:3000";
  try {
    return new URL(`${proto === "https" ? "https" : "http"}://${host}`);
  } catch {
    return new URL("http://localhost:3000");
  }
}

/**
 * Where install commands point: web's public origin (serving /install-agent.sh) and the hub URL
 * agents dial. Without VOLLEY_PUBLIC_URL / VOLLEY_HUB_PUBLIC_URL both follow the request's host,
 * which is right for a single-host install; anything behind a proxy should set them.
 */
export function agentEndpoints(headers: Headers): { webOrigin: string; hubUrl: string } {
  const url = requestUrl(headers);
  return {
    webOrigin: publicUrl() ?? url.origin,
    hubUrl: hubPublicUrl() ?? `http://${url.hostname}:${HUB_DEFAULT_PORT}`,
  };
}
