import { getMembership, listMemberships, useApiToken, type ApiTokenScope, type OrgRole } from "@volley/db";
import { getAuth } from "./better-auth";
import { ApiError } from "../http/errors";
import { getDb } from "../http/services";

/** Who a request acts as: an org, and a signed-in member of it or one of its API tokens. */
export interface AuthContext {
  orgId: string;
  actor: { kind: "anonymous" } | { kind: "user"; userId: string; email: string; role: OrgRole } | { kind: "token"; tokenId: string; scopes: ApiTokenScope[] };
}

/**
 * What a handler needs to be allowed to do.
 * - `public`: anyone (the OpenAPI document).
 * - `*:read`: any member (viewer and up) or a token with the `read` scope.
 * - `runs:write` (start/stop runs) and `plans:write`: member and up, or a token with the `run` scope.
 * - `org:admin` (API tokens, webhooks, agents, agent tokens, targets): admin and owner, in the UI only —
 *   a token can never mint or revoke credentials.
 */
export type Permission = "public" | "docs:read" | "runs:read" | "plans:read" | "runs:write" | "plans:write" | "org:admin";

const ROLE_RANK: Record<OrgRole, number> = { viewer: 0, member: 1, admin: 2, owner: 3 };
const NEEDS: Record<Exclude<Permission, "public" | "docs:read">, { role: OrgRole; scope: ApiTokenScope | null }> = {
  "runs:read": { role: "viewer", scope: "read" },
  "plans:read": { role: "viewer", scope: "read" },
  "runs:write": { role: "member", scope: "run" },
  "plans:write": { role: "member", scope: "run" },
  "org:admin": { role: "admin", scope: null },
};

const unauthenticated = (why: string) =>
  new ApiError(401, "unauthenticated", `${why} — send "Authorization: Bearer <token>" with an API token (Settings → API tokens in the web UI), or sign in`);

/**
 * `Authorization: Bearer vly_…` → the token's org and scopes (last-used time recorded); otherwise
 * the better-auth session cookie → the user's active org and their role in it. A route that is
 * `public` still gets the caller when there is one.
 */
export async function authenticate(req: Request, permission: Permission = "runs:read"): Promise<AuthContext> {
  const header = req.headers.get("authorization");
  if (header !== null) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw unauthenticated('the Authorization header is not "Bearer <token>"');
    const token = await useApiToken(getDb(), match[1]!);
    if (!token) throw unauthenticated("the API token is unknown or revoked");
    return { orgId: token.orgId, actor: { kind: "token", tokenId: token.id, scopes: token.scopes } };
  }
  const session = await sessionUser(req);
  if (session) return session;
  if (permission === "public" || permission === "docs:read") return { orgId: "", actor: { kind: "anonymous" } };
  throw unauthenticated("this endpoint needs credentials");
}

/** The signed-in user and their role in their active org (first org when none is active); null without a session. */
export async function sessionUser(req: Request | { headers: Headers }): Promise<AuthContext | null> {
  // No cookie, no session: skip better-auth (and the database), so anonymous public requests stay cheap.
  if (!req.headers.get("cookie")) return null;
  const found = await getAuth(req.headers).api.getSession({ headers: req.headers });
  if (!found) return null;
  const db = getDb();
  const active = found.session.activeOrganizationId;
  const membership = active ? await getMembership(db, found.user.id, active) : null;
  if (membership) return { orgId: membership.organizationId, actor: { kind: "user", userId: found.user.id, email: found.user.email, role: membership.role } };
  const [first] = await listMemberships(db, found.user.id);
  if (!first) throw new ApiError(403, "forbidden", "your account belongs to no organization — ask an admin for an invitation link");
  return { orgId: first.orgId, actor: { kind: "user", userId: found.user.id, email: found.user.email, role: first.role } };
}

export function authorize(auth: AuthContext, permission: Permission): void {
  if (permission === "public" || permission === "docs:read") return;
  const need = NEEDS[permission];
  const { actor } = auth;
  if (actor.kind === "anonymous") throw unauthenticated("this endpoint needs credentials");
  if (actor.kind === "token") {
    if (need.scope === null) throw new ApiError(403, "forbidden", `API tokens cannot do this (${permission}); sign in to the web UI as an org admin`);
    if (!actor.scopes.includes(need.scope)) {
      throw new ApiError(
        403,
        "forbidden",
        `this API token lacks the "${need.scope}" scope (${permission}); create a token with it under Settings → API tokens`,
      );
    }
    return;
  }
  if (ROLE_RANK[actor.role] < ROLE_RANK[need.role]) {
    throw new ApiError(403, "forbidden", `your role in this org (${actor.role}) cannot do this (${permission}); it needs ${need.role} or above`);
  }
}

/** Whether the caller may do this (authorize without the throw), for pages that show or hide controls. */
export function may(auth: AuthContext, permission: Permission): boolean {
  try {
    authorize(auth, permission);
    return true;
  } catch (err) {
    if (err instanceof ApiError) return false;
    throw err;
  }
}
