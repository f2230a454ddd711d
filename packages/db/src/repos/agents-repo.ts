import { asc, eq } from "drizzle-orm";
import type { AgentHello } from "@volley/contracts";
import type { Db } from "../client";
import { newId } from "../ids";
import { agents, DEFAULT_ORG_ID } from "../schema";

export type AgentRow = typeof agents.$inferSelect;

/** Registers an agent process by its instance id (stable across its reconnects) and marks it online. */
export async function upsertAgent(db: Db, hello: AgentHello, orgId = DEFAULT_ORG_ID): Promise<AgentRow> {
  const now = new Date();
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
      status: "online",
      connectedAt: now,
      lastSeenAt: now,
    })
    .onConflictDoUpdate({
      target: agents.instanceId,
      set: { name: hello.name, pool: hello.pool, version: hello.version, labels: hello.labels, capacity: hello.capacity, status: "online", connectedAt: now, lastSeenAt: now },
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
