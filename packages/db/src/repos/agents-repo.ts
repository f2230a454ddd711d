import { and, asc, eq, inArray, isNull, lt, ne, notExists, or, sql } from "drizzle-orm";
import { AGENT_OFFLINE_AFTER_MS, type AgentHello, type AgentListItem } from "@volley/contracts";
import type { Db } from "../client";
import { newId } from "../ids";
import { agents, DEFAULT_ORG_ID, shards } from "../schema";

export type AgentRow = typeof agents.$inferSelect;

/** Who admitted the agent: its org, and the join token it presented (null for the hub's shared bootstrap token). */
export interface AgentEnrollment {
  orgId?: string;
  tokenId?: string | null;
}

/**
 * The agent's persisted id (agentKey) names a row of another org: the agent is refused, never moved
 * into the org of the token it now presents (that would hand one org's agent row to another).
 */
export class AgentKeyConflictError extends Error {
  constructor(
    readonly agentKey: string,
    readonly ownerOrgId: string | null,
  ) {
    super(`agent id ${agentKey} is registered in another organization (${ownerOrgId ?? "unknown"})`);
    this.name = "AgentKeyConflictError";
  }
}

/**
 * The hello's instance id names another agent row of the same org that it may not take: a row
 * with a persisted id (matched only by that id), or one enrolled with another token. Reconnects of
 * one process present its token (and persisted id) again; anyone else who read the instance id in
 * the agent's log does not, and must not take over its row or its live session.
 */
export class AgentInstanceConflictError extends Error {
  constructor(
    readonly instanceId: string,
    readonly orgId: string,
  ) {
    super(`agent instance id ${instanceId} belongs to another agent of organization ${orgId}`);
    this.name = "AgentInstanceConflictError";
  }
}

const isUniqueViolation = (err: unknown, index: string) => {
  const cause = err instanceof Error && err.cause ? err.cause : err;
  return (
    typeof cause === "object" && cause !== null && (cause as { code?: unknown }).code === "23505" && (cause as { constraint?: unknown }).constraint === index
  );
};

/**
 * Registers an agent and marks it online. A row is only ever matched within the caller's org:
 * - with a persisted id (agentKey), the row of that id, across restarts (a new process: new
 *   instanceId); a row of that id in another org throws AgentKeyConflictError;
 * - without one, the row of the process (instance id, stable across its reconnects) if it has no
 *   persisted id and was enrolled with the same token (null: the bootstrap token).
 * An instance id of another org's row gets a row of its own; one of a same-org row the hello may
 * not take (above) throws AgentInstanceConflictError, leaving that row as it was.
 */
export async function upsertAgent(db: Db, hello: AgentHello, enrollment: AgentEnrollment = {}): Promise<AgentRow> {
  const now = new Date();
  const orgId = enrollment.orgId ?? DEFAULT_ORG_ID;
  const tokenId = enrollment.tokenId ?? null;
  const live = {
    tokenId,
    name: hello.name,
    pool: hello.pool,
    version: hello.version,
    labels: hello.labels,
    capacity: hello.capacity,
    status: "online" as const,
    connectedAt: now,
    lastSeenAt: now,
  };
  const values = { id: newId("agt"), orgId, instanceId: hello.instanceId, agentKey: hello.agentKey ?? null, ...live };
  const instanceTaken = (err: unknown): never => {
    throw isUniqueViolation(err, "agents_org_instance_idx") ? new AgentInstanceConflictError(hello.instanceId, orgId) : err;
  };
  if (hello.agentKey) {
    const [row] = await db
      .insert(agents)
      .values(values)
      .onConflictDoUpdate({ target: agents.agentKey, set: { ...live, instanceId: hello.instanceId }, setWhere: eq(agents.orgId, orgId) })
      .returning()
      .catch(instanceTaken);
    if (row) return row;
    // The conflicting row's org differs (the update's condition failed): name it in the hub's log, not to the agent.
    const [owner] = await db.select({ orgId: agents.orgId }).from(agents).where(eq(agents.agentKey, hello.agentKey));
    throw new AgentKeyConflictError(hello.agentKey, owner?.orgId ?? null);
  }
  const [row] = await db
    .insert(agents)
    .values(values)
    .onConflictDoUpdate({
      target: [agents.orgId, agents.instanceId],
      set: live,
      setWhere: and(isNull(agents.agentKey), sql`${agents.tokenId} IS NOT DISTINCT FROM ${tokenId}`),
    })
    .returning();
  if (!row) throw new AgentInstanceConflictError(hello.instanceId, orgId);
  return row;
}

export async function setAgentStatus(db: Db, id: string, status: AgentRow["status"]): Promise<void> {
  await db.update(agents).set({ status, lastSeenAt: new Date() }).where(eq(agents.id, id));
}

export async function listAgents(db: Db, orgId = DEFAULT_ORG_ID): Promise<AgentRow[]> {
  return db.select().from(agents).where(eq(agents.orgId, orgId)).orderBy(asc(agents.name));
}

/** The status to show: the row's, unless the agent has not been heard from within `offlineAfterMs` (its hub may have crashed). */
export function effectiveAgentStatus(row: Pick<AgentRow, "status" | "lastSeenAt">, now: number, offlineAfterMs = AGENT_OFFLINE_AFTER_MS): AgentRow["status"] {
  if (row.status === "offline") return "offline";
  if (!row.lastSeenAt || now - row.lastSeenAt.getTime() > offlineAfterMs) return "offline";
  return row.status;
}

/**
 * An org's agents as GET /api/v1/agents shows them: online / busy / offline with capacity. Rows
 * are written by the hubs (connect, heartbeat every 5 s, disconnect); a row left online by a hub
 * that died is shown offline once its last heartbeat is older than `offlineAfterMs`.
 */
export async function listAgentStatuses(db: Db, orgId: string, opts: { offlineAfterMs?: number; now?: number } = {}): Promise<AgentListItem[]> {
  const now = opts.now ?? Date.now();
  const rows = await db.select().from(agents).where(eq(agents.orgId, orgId)).orderBy(asc(agents.name), asc(agents.id));
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    pool: r.pool,
    status: effectiveAgentStatus(r, now, opts.offlineAfterMs),
    version: r.version,
    labels: r.labels,
    capacity: r.capacity,
    tokenId: r.tokenId,
    connectedAt: r.connectedAt?.toISOString() ?? null,
    lastSeenAt: r.lastSeenAt?.toISOString() ?? null,
  }));
}

/**
 * Marks offline every agent not heard from within `olderThanMs` (a hub starting after a crash
 * leaves its agents' rows online). Only stale rows: agents of other live hub replicas heartbeat
 * and must keep their status. Returns how many rows changed.
 */
export async function markStaleAgentsOffline(db: Db, olderThanMs = AGENT_OFFLINE_AFTER_MS): Promise<number> {
  const cutoff = new Date(Date.now() - olderThanMs);
  const rows = await db
    .update(agents)
    .set({ status: "offline" })
    .where(and(ne(agents.status, "offline"), or(isNull(agents.lastSeenAt), lt(agents.lastSeenAt, cutoff))))
    .returning({ id: agents.id });
  return rows.length;
}

/** Shard states in which an agent is carrying load (or about to): its row must stay. */
const ACTIVE_SHARD = ["assigned", "running"] as const;

export type RemoveAgentResult = { status: "removed" } | { status: "not_found" } | { status: "busy"; runId: string | null } | { status: "online" };

/**
 * Deletes an org's agent row, only if it is offline (as listAgentStatuses shows it) and holds no
 * assigned or running shard — checked in the DELETE itself, so an agent connecting meanwhile keeps
 * its row. Past shards keep their data (shards.agent_id is set null). The agent, should it come
 * back, enrolls as new with its token.
 */
export async function removeAgent(db: Db, orgId: string, id: string, opts: { offlineAfterMs?: number; now?: number } = {}): Promise<RemoveAgentResult> {
  const now = opts.now ?? Date.now();
  const offlineAfterMs = opts.offlineAfterMs ?? AGENT_OFFLINE_AFTER_MS;
  const cutoff = new Date(now - offlineAfterMs);
  const activeShards = (agentId: typeof agents.id | string) =>
    db
      .select({ runId: shards.runId })
      .from(shards)
      .where(and(eq(shards.agentId, agentId), inArray(shards.status, [...ACTIVE_SHARD])));
  // Twice at most: a row whose heartbeat ages out between the DELETE and the reads below is offline by the second try.
  for (let attempt = 1; ; attempt++) {
    const deleted = await db
      .delete(agents)
      .where(
        and(
          eq(agents.id, id),
          eq(agents.orgId, orgId),
          or(eq(agents.status, "offline"), isNull(agents.lastSeenAt), lt(agents.lastSeenAt, cutoff)),
          notExists(activeShards(agents.id)),
        ),
      )
      .returning({ id: agents.id });
    if (deleted.length) return { status: "removed" };
    const [row] = await db
      .select()
      .from(agents)
      .where(and(eq(agents.id, id), eq(agents.orgId, orgId)));
    if (!row) return { status: "not_found" };
    const [shard] = await activeShards(id).limit(1);
    if (shard) return { status: "busy", runId: shard.runId };
    const status = effectiveAgentStatus(row, opts.now ?? Date.now(), offlineAfterMs);
    if (status === "busy") return { status: "busy", runId: null };
    if (status === "online" || attempt === 2) return { status: "online" };
  }
}

/**
 * Deletes agent rows not heard from since `before` and holding no active shard, up to `limit` per
 * call (call again until it returns 0): agents that come and go (autoscaled, ephemeral state, or
 * one token opening many sockets) would otherwise leave a row each forever. One that comes back
 * enrolls anew. Returns the ids deleted.
 */
export async function deleteAgentsNotSeenSince(db: Db, before: Date, limit = 1000): Promise<string[]> {
  const stale = db
    .select({ id: agents.id })
    .from(agents)
    .where(
      and(
        or(lt(agents.lastSeenAt, before), and(isNull(agents.lastSeenAt), lt(agents.connectedAt, before))),
        notExists(
          db
            .select({ id: shards.id })
            .from(shards)
            .where(and(eq(shards.agentId, agents.id), inArray(shards.status, [...ACTIVE_SHARD]))),
        ),
      ),
    )
    .limit(limit);
  const deleted = await db.delete(agents).where(inArray(agents.id, stale)).returning({ id: agents.id });
  return deleted.map((r) => r.id);
}
