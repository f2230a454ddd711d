import { createAgentTokenBodySchema } from "@volley/contracts";
import { apiHandler, json } from "@/server/http/api-handler";
import { createJoinToken, listJoinTokens } from "@/server/agents/agents";

/** POST /api/v1/agent-tokens {"name", "pool"} → 201 {"token", "secret"}: the join token's secret is shown this once. Org admins, signed in. */
export const POST = apiHandler({
  permission: "org:admin",
  body: createAgentTokenBodySchema,
  handler: async ({ body, auth }) => json(await createJoinToken(auth, body), 201),
});

/** GET /api/v1/agent-tokens → {"tokens": [...]}, newest first, revoked ones included (with revokedAt). */
export const GET = apiHandler({
  permission: "org:admin",
  handler: async ({ auth }) => json({ tokens: await listJoinTokens(auth.orgId) }),
});
