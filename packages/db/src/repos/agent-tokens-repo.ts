import { createHash, randomBytes } from "node:crypto";
import { and, desc, eq, isNull } from "drizzle-orm";
import { agentsSchema } from "@volley/contracts";
import type { Db } from "../client";
import { newId } from "../ids";
import { agentTokens } from "../schema";

export type AgentTokenRow = typeof agentTokens.$inferSelect;
/** A token as lists show it: never the hash. */
export type AgentTokenInfo = Omit<AgentTokenRow, "tokenHash">;

/** Join tokens are `vat_` + 32 base64url characters; the prefix tells them from API tokens (`vly_`) and helps secret scanners. */
export const AGENT_TOKEN_PREFIX = "vat_";

export const hashAgentToken = (secret: string): string => createHash("sha256").update(secret).digest("hex");

export const isJoinTokenSecret = (secret: string): boolean => secret.startsWith(AGENT_TOKEN_PREFIX);

const info = ({ tokenHash: _hash, ...rest }: AgentTokenRow): AgentTokenInfo => rest;

/**
 * Creates a join token for agents of `orgId`, enrolling them into `pool`; returns its secret —
 * the only time the secret exists outside the caller (only its SHA-256 is stored).
 */
export async function createAgentToken(
  db: Db,
  input: { orgId: string; name: string; pool?: string; createdBy?: string | null },
): Promise<{ token: AgentTokenInfo; secret: string }> {
  const pool = agentsSchema.shape.pool.safeParse(input.pool ?? "default");
  if (!pool.success) throw new Error(`pool '${input.pool}': ${pool.error.issues[0]?.message ?? "invalid"}`);
  const secret = `${AGENT_TOKEN_PREFIX}${randomBytes(24).toString("base64url")}`;
  const [token] = await db
    .insert(agentTokens)
    .values({
      id: newId("atk"),
      orgId: input.orgId,
      name: input.name,
      pool: pool.data,
      tokenHash: hashAgentToken(secret),
      prefix: secret.slice(0, AGENT_TOKEN_PREFIX.length + 6),
      createdBy: input.createdBy ?? null,
    })
    .returning();
  return { token: info(token!), secret };
}

export async function listAgentTokens(db: Db, orgId: string): Promise<AgentTokenInfo[]> {
  const rows = await db.select().from(agentTokens).where(eq(agentTokens.orgId, orgId)).orderBy(desc(agentTokens.createdAt), desc(agentTokens.id));
  return rows.map(info);
}

/** Revokes a token of this org; false when the org has no such live token. Agents using it are dropped at their next heartbeat. */
export async function revokeAgentToken(db: Db, orgId: string, id: string): Promise<boolean> {
  const rows = await db
    .update(agentTokens)
    .set({ revokedAt: new Date() })
    .where(and(eq(agentTokens.id, id), eq(agentTokens.orgId, orgId), isNull(agentTokens.revokedAt)))
    .returning({ id: agentTokens.id });
  return rows.length === 1;
}

export type AgentTokenCheck = { status: "live"; token: AgentTokenInfo } | { status: "revoked"; token: AgentTokenInfo } | { status: "unknown" };

/**
 * Looks a presented secret up: a live token has its last_used_at bumped; a revoked one is told
 * apart from an unknown one so the gateway can say which (the hash is of a high-entropy secret,
 * so naming "revoked" leaks nothing a guesser could use).
 */
export async function verifyAgentToken(db: Db, secret: string): Promise<AgentTokenCheck> {
  const hash = hashAgentToken(secret);
  const [live] = await db
    .update(agentTokens)
    .set({ lastUsedAt: new Date() })
    .where(and(eq(agentTokens.tokenHash, hash), isNull(agentTokens.revokedAt)))
    .returning();
  if (live) return { status: "live", token: info(live) };
  const [revoked] = await db.select().from(agentTokens).where(eq(agentTokens.tokenHash, hash));
  return revoked ? { status: "revoked", token: info(revoked) } : { status: "unknown" };
}

/** last_used_at is bumped at most this often by heartbeats: a read per heartbeat, not a write. */
const TOUCH_EVERY_MS = 60_000;

/** Whether the token an agent enrolled with still admits it (checked at every heartbeat); bumps last_used_at now and then. */
export async function touchAgentToken(db: Db, id: string): Promise<boolean> {
  const [row] = await db.select({ revokedAt: agentTokens.revokedAt, lastUsedAt: agentTokens.lastUsedAt }).from(agentTokens).where(eq(agentTokens.id, id));
  if (!row || row.revokedAt) return false;
  if (!row.lastUsedAt || Date.now() - row.lastUsedAt.getTime() > TOUCH_EVERY_MS) {
    await db.update(agentTokens).set({ lastUsedAt: new Date() }).where(eq(agentTokens.id, id));
  }
  return true;
}
