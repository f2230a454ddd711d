import { createApiTokenBodySchema } from "@volley/contracts";
import { apiHandler, json } from "@/server/http/api-handler";
import { createToken, listTokens } from "@/server/tokens/tokens";

/** POST /api/v1/tokens {"name", "scopes"} → 201 {"token", "secret"}: the secret is shown this once. Org admins, signed in. */
export const POST = apiHandler({
  permission: "org:admin",
  body: createApiTokenBodySchema,
  handler: async ({ body, auth }) => json(await createToken(auth, body), 201),
});

/** GET /api/v1/tokens → {"tokens": [...]}, newest first, revoked ones included (with revokedAt). */
export const GET = apiHandler({
  permission: "org:admin",
  handler: async ({ auth }) => json({ tokens: await listTokens(auth.orgId) }),
});
