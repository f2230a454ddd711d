import { apiHandler, json } from "@/server/http/api-handler";
import { openApiDocument } from "@/server/openapi/openapi";

/** GET /api/v1/openapi.json → the OpenAPI 3.1 document of /api/v1, generated from the contracts' zod schemas. */
export const GET = apiHandler({
  permission: "docs:read",
  // The document only changes with a deploy, so clients and proxies may keep it for a while.
  handler: async () => json(openApiDocument(), 200, { "cache-control": "public, max-age=300" }),
});
