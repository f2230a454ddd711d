import { apiHandler } from "@/server/http/api-handler";
import { agentPackage } from "@/server/agents/agent-package";

/** GET /agent/volley-agent.tgz.sha256 → `<hex>  volley-agent.tgz`, for `sha256sum -c` (the installer checks it). */
export const GET = apiHandler({
  permission: "public",
  handler: async () => {
    const { sha256Line } = await agentPackage();
    return new Response(sha256Line, { status: 200, headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-cache" } });
  },
});
