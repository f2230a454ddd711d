import { apiHandler } from "@/server/http/api-handler";
import { agentDockerfile } from "@/server/agents/agent-package";
import { agentEndpoints } from "@/server/agents/agents";

/** GET /agent/Dockerfile → the agent image's Dockerfile for this install (see agentDockerfile). Public: it holds no secret. */
export const GET = apiHandler({
  permission: "public",
  handler: async ({ req }) =>
    new Response(await agentDockerfile(agentEndpoints(req.headers).webOrigin), {
      status: 200,
      headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-cache" },
    }),
});
