import { addTargetHostBodySchema } from "@volley/contracts";
import { apiHandler, json } from "@/server/http/api-handler";
import { addHost, listHosts } from "@/server/targets/targets";

/** POST /api/v1/targets {"host"} → 201 the host with its proof token and where to put it (hosted mode's ownership check). */
export const POST = apiHandler({
  permission: "org:admin",
  body: addTargetHostBodySchema,
  handler: async ({ body, auth }) => json(await addHost(auth, body.host), 201),
});

/** GET /api/v1/targets → {"targets": [...]} */
export const GET = apiHandler({
  permission: "plans:read",
  handler: async ({ auth }) => json({ targets: await listHosts(auth.orgId) }),
});
