import { and, asc, eq, lt, ne, or, isNull } from "drizzle-orm";
import { AGENT_OFFLINE_AFTER_MS, type AgentHello, type AgentListItem } from "@volley/contracts";
import type { Db } from "../client";
import { newId } from "../ids";
import { agents, DEFAULT_ORG_ID } from "../schema";

export type AgentRow = typeof agents.$inferSelect;

/** Who admitted the agent: its org, and the join token it presented (null for the hub's shared bootstrap token). */
export interface AgentEnrollment {
  orgId?: string;
  tokenId?: string | null;
}

/** Registers an agent process by its instance id (stable across its reconnects) and marks it online. */
export async function upsertAgent(db: Db, hello: AgentHello, enrollment: AgentEnrollment = {}): Promise<AgentRow> {
  const now = new Date();
  const orgId = enrollment.orgId ?? DEFAULT_ORG_ID;
  const tokenId = enrollment.tokenId ?? null;
  const [row] = await db
    .insert(agents)
    .values({
      id: newId("agt"),
      orgId,
      name: hello.name,
      pool: hello.pool,
      instanceId: hello.instanceId,
      version: hello.version,
      labels: hello.labels,
      capacity: hello.capacity,
      tokenId,
      status: "online",
      connectedAt: now,
      lastSeenAt: now,
    })
    .onConflictDoUpdate({
      target: agents.instanceId,
      set: { orgId, tokenId, name: hello.name, pool: hello.pool, version: hello.version, labels: hello.labels, capacity: hello.capacity, status: "online", connectedAt: now, lastSeenAt: now },
    })
    .returning();
  return row!;
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
export async function listAgentStatuses(
  db: Db,
  orgId: string,
  opts: { offlineAfterMs?: number; now?: number } = {},
): Promise<AgentListItem[]> {
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
