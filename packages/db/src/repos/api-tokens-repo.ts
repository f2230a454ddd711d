import { createHash, randomBytes } from "node:crypto";
import { and, desc, eq, isNull } from "drizzle-orm";
import type { Db } from "../client";
import { newId } from "../ids";
import { apiTokens, type ApiTokenScope } from "../schema";

export type ApiTokenRow = typeof apiTokens.$inferSelect;

/** Tokens are `vly_` + 32 random base64url characters; the prefix makes leaked ones greppable by secret scanners. */
export const API_TOKEN_PREFIX = "vly_";

export const hashApiToken = (secret: string): string => createHash("sha256").update(secret).digest("hex");

/** Creates a token and returns its secret — the only time the secret exists outside the caller. */
export async function createApiToken(
  db: Db,
  input: { orgId: string; name: string; scopes: ApiTokenScope[]; createdBy?: string | null },
): Promise<{ token: ApiTokenRow; secret: string }> {
  const secret = `${API_TOKEN_PREFIX}${randomBytes(24).toString("base64url")}`;
  const [token] = await db
    .insert(apiTokens)
    .values({
      id: newId("tok"),
      orgId: input.orgId,
      name: input.name,
      scopes: [...new Set(input.scopes)],
      tokenHash: hashApiToken(secret),
      prefix: secret.slice(0, API_TOKEN_PREFIX.length + 6),
      createdBy: input.createdBy ?? null,
    })
    .returning();
  return { token: token!, secret };
}

/** The live (not revoked) token with this secret, its last-used time bumped; null when unknown or revoked. */
export async function useApiToken(db: Db, secret: string): Promise<ApiTokenRow | null> {
  const [row] = await db
    .update(apiTokens)
    .set({ lastUsedAt: new Date() })
    .where(and(eq(apiTokens.tokenHash, hashApiToken(secret)), isNull(apiTokens.revokedAt)))
    .returning();
  return row ?? null;
}

export async function listApiTokens(db: Db, orgId: string): Promise<ApiTokenRow[]> {
  return db.select().from(apiTokens).where(eq(apiTokens.orgId, orgId)).orderBy(desc(apiTokens.createdAt));
}

/** Revokes a token of this org; false when the org has no such live token. */
export async function revokeApiToken(db: Db, orgId: string, id: string): Promise<boolean> {
  const rows = await db
    .update(apiTokens)
    .set({ revokedAt: new Date() })
    .where(and(eq(apiTokens.id, id), eq(apiTokens.orgId, orgId), isNull(apiTokens.revokedAt)))
    .returning({ id: apiTokens.id });
  return rows.length === 1;
}
