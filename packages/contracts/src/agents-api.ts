import { z } from "zod";
import { agentCapacitySchema } from "./agent-protocol";
import { agentsSchema } from "./plan";

/** REST shapes for agents and their join tokens (GET /api/v1/agents, /api/v1/agent-tokens). */

/** Agents heartbeat every 5 s; one not heard from for this long is offline, whatever its row says. */
export const AGENT_OFFLINE_AFTER_MS = 30_000;

export const agentStatusSchema = z.enum(["online", "busy", "offline"]);
export type AgentStatus = z.infer<typeof agentStatusSchema>;

export const agentListItemSchema = z.object({
  id: z.string(),
  name: z.string(),
  pool: z.string(),
  status: agentStatusSchema,
  version: z.string(),
  labels: z.record(z.string(), z.string()),
  capacity: agentCapacitySchema,
  /** The join token it enrolled with; null for agents admitted by the hub's shared AGENT_TOKEN. */
  tokenId: z.string().nullable(),
  connectedAt: z.string().nullable(),
  lastSeenAt: z.string().nullable(),
});
export type AgentListItem = z.infer<typeof agentListItemSchema>;

export const createAgentTokenBodySchema = z.strictObject({
  name: z.string().trim().min(1, 'give the token a name, like "eu-west load generators"').max(100),
  /** Agents enrolling with the token join this pool. */
  pool: agentsSchema.shape.pool,
});
export type CreateAgentTokenBody = z.infer<typeof createAgentTokenBodySchema>;

export const agentTokenSchema = z.object({
  id: z.string(),
  name: z.string(),
  pool: z.string(),
  /** The first characters of the secret, to tell tokens apart. */
  prefix: z.string(),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
});
export type AgentToken = z.infer<typeof agentTokenSchema>;

export const createAgentTokenResponseSchema = z.object({
  token: agentTokenSchema,
  /** The secret (`vat_…`): shown this once, never again. Give it to the agent as AGENT_TOKEN. */
  secret: z.string(),
});
