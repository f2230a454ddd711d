import type { ApiToken, CreateApiTokenBody } from "@volley/contracts";
import { createApiToken, listApiTokens, revokeApiToken, type ApiTokenRow } from "@volley/db";
import type { AuthContext } from "../auth/auth";
import { notFound } from "../http/errors";
import { getDb } from "../http/services";

/** API tokens of an org: created (secret shown once), listed with last use, revoked. */

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function toApiToken(row: ApiTokenRow): ApiToken {
  return {
    id: row.id,
    name: row.name,
    scopes: row.scopes,
    prefix: row.prefix,
    createdAt: row.createdAt.toISOString(),
    lastUsedAt: iso(row.lastUsedAt),
    revokedAt: iso(row.revokedAt),
  };
}

export async function createToken(auth: AuthContext, body: CreateApiTokenBody): Promise<{ token: ApiToken; secret: string }> {
  const createdBy = auth.actor.kind === "user" ? auth.actor.userId : null;
  const { token, secret } = await createApiToken(getDb(), { orgId: auth.orgId, name: body.name, scopes: body.scopes, createdBy });
  return { token: toApiToken(token), secret };
}

export async function listTokens(orgId: string): Promise<ApiToken[]> {
  return (await listApiTokens(getDb(), orgId)).map(toApiToken);
}

export async function revokeToken(orgId: string, id: string): Promise<void> {
  if (!(await revokeApiToken(getDb(), orgId, id))) throw notFound(`API token ${id}`);
}
