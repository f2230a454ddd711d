import { and, asc, count, eq, isNull } from "drizzle-orm";
import type { AgentHello } from "@volley/contracts";
import { DEFAULT_ORG_ID, schema, type Db } from "@volley/db";

/**
 * Why this hello may not create an agents row (null: it may, or it matches a row it updates). Each
 * token may have `max` rows: one valid token opening hundreds of sockets, each with a fresh
 * instance id, would otherwise leave a row per socket. A hello matching a row (its persisted
 * agentKey, or its instance id in the org) never counts: reconnects and restarts keep theirs.
 * Callers serialize hellos of one token (serializeByKey), so concurrent ones cannot overshoot.
 */
export async function agentRowRefusal(db: Db, hello: AgentHello, enrollment: { orgId: string; tokenId: string | null }, max: number): Promise<string | null> {
  const { agents } = schema;
  const match = hello.agentKey ? eq(agents.agentKey, hello.agentKey) : and(eq(agents.orgId, enrollment.orgId), eq(agents.instanceId, hello.instanceId));
  const [existing] = await db.select({ id: agents.id }).from(agents).where(match).limit(1);
  if (existing) return null;
  const byToken = enrollment.tokenId ? eq(agents.tokenId, enrollment.tokenId) : and(eq(agents.orgId, DEFAULT_ORG_ID), isNull(agents.tokenId));
  const [row] = await db.select({ n: count() }).from(agents).where(byToken);
  const n = row?.n ?? 0;
  if (n < max) return null;
  const which = enrollment.tokenId ? "this join token" : "the hub's shared AGENT_TOKEN";
  return (
    `agent limit reached: ${which} already has ${n} agents registered (HUB_MAX_AGENTS_PER_TOKEN=${max}), and this one would be another: ` +
    "run agents with a persistent AGENT_STATE_DIR so a restart keeps its identity instead of enrolling anew, remove agents you no longer use " +
    "(Agents → Remove; offline ones also leave after AGENT_RETENTION_DAYS), or ask the hub's operator to raise HUB_MAX_AGENTS_PER_TOKEN"
  );
}

/**
 * The account an organization's pools count against: its first owner (one account may own up to
 * VOLLEY_MAX_ORGS_PER_USER orgs), or the org itself when it has none (the default org of a
 * self-hosted install). Cached for `ttlMs`: asked at every agent hello.
 */
export function orgAccounts(db: Db, ttlMs = 60_000): (orgId: string) => Promise<string> {
  const cache = new Map<string, { account: string; at: number }>();
  return async (orgId) => {
    const hit = cache.get(orgId);
    if (hit && Date.now() - hit.at < ttlMs) return hit.account;
    const { members } = schema;
    const [owner] = await db
      .select({ userId: members.userId })
      .from(members)
      .where(and(eq(members.organizationId, orgId), eq(members.role, "owner")))
      .orderBy(asc(members.createdAt), asc(members.id))
      .limit(1);
    const account = owner ? `user:${owner.userId}` : `org:${orgId}`;
    if (cache.size >= 10_000) cache.clear();
    cache.set(orgId, { account, at: Date.now() });
    return account;
  };
}

/** Runs `fn` after every earlier call with the same key has settled (one hub's hellos of one token, in turn). */
export function serializeByKey(): <T>(key: string, fn: () => Promise<T>) => Promise<T> {
  const tails = new Map<string, Promise<unknown>>();
  return (key, fn) => {
    const run = (tails.get(key) ?? Promise.resolve()).then(fn, fn);
    const tail = run.catch(() => {});
    tails.set(key, tail);
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key);
    });
    return run;
  };
}
