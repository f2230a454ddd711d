import { apiHandler } from "@/server/http/api-handler";
import { agentPackage } from "@/server/agents/agent-package";

/**
 * GET /agent/volley-agent.tgz → this install's agent, bundled and packed by npm (apps/agent/src/pack),
 * which infra/agent/install.sh and the agent image `npm install`. Public: it holds no secret.
 */
export const GET = apiHandler({
  permission: "public",
  handler: async () => {
    const { tarball, sha256Line } = await agentPackage();
    return new Response(new Uint8Array(tarball), {
      status: 200,
      headers: {
        "content-type": "application/gzip",
        "content-length": String(tarball.length),
        "cache-control": "no-cache",
        "content-disposition": 'attachment; filename="volley-agent.tgz"',
        "x-checksum-sha256": sha256Line.split(/\s+/)[0]!,
      },
    });
  },
});
