import { apiHandler } from "../../../server/api-handler";
import { agentDockerfile } from "../../../server/agent-package";
import { agentEndpoints } from "../../../server/agents";

/** GET /agent/Dockerfile → the agent image's Dockerfile for this install (see agentDockerfile). Public: it holds no secret. */
export const GET = apiHandler({
  permission: "public",
  handler: async ({ req }) =>
    new Response(await agentDockerfile(agentEndpoints(req.headers).webOrigin), {
      status: 200,
      headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-cache" },
    }),
});
