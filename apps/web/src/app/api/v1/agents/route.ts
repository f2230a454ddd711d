import { apiHandler, json } from "@/server/http/api-handler";
import { listAgents } from "@/server/agents/agents";

/** GET /api/v1/agents → {"agents": [...]}: the org's agents, online / busy / offline (a stale heartbeat reads offline), with capacity. */
export const GET = apiHandler({
  permission: "runs:read",
  handler: async ({ auth }) => json({ agents: await listAgents(auth.orgId) }),
});
