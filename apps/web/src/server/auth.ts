import { DEFAULT_ORG_ID } from "@volley/db";

/**
 * Who a request acts as. Until accounts and API tokens exist every request acts as the default
 * org; the shape is what the token/session check will return, so handlers already scope by org.
 */
export interface AuthContext {
  orgId: string;
  actor: { kind: "anonymous" } | { kind: "user"; userId: string } | { kind: "token"; tokenId: string };
}

/** What a handler needs to be allowed to do. Checked by `authorize` (today: everything is allowed). */
export type Permission = "public" | "docs:read" | "runs:read" | "plans:read" | "runs:write" | "plans:write" | "org:admin";

export async function authenticate(_req: Request, _permission?: Permission): Promise<AuthContext> {
  // Later: `Authorization: Bearer vly_…` → hashed token lookup; session cookie → user. 401 when invalid.
  return { orgId: DEFAULT_ORG_ID, actor: { kind: "anonymous" } };
}

export function authorize(_auth: AuthContext, _permission: Permission): void {
  // Later: roles and token scopes; throw new ApiError(403, "forbidden", …) when not allowed.
}
