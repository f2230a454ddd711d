import { apiHandler } from "@/server/http/api-handler";
import { readAgentInstaller } from "@/server/agents/agent-installer";

/**
 * GET /install-agent.sh → infra/agent/install.sh, for
 * `curl -fsSL <web>/install-agent.sh | sudo bash -s -- --token <join token> --hub <hub url>`.
 * Public: the script holds no secret (the token is an argument on the agent host).
 */
export const GET = apiHandler({
  permission: "public",
  handler: async () =>
    new Response(await readAgentInstaller(), {
      status: 200,
      headers: {
        "content-type": "text/x-shellscript; charset=utf-8",
        "cache-control": "no-cache",
        "content-disposition": 'inline; filename="install-agent.sh"',
      },
    }),
});
