import { randomUUID } from "node:crypto";
import { availableParallelism, totalmem } from "node:os";
import { agentHelloSchema, type AgentHello } from "@volley/contracts";
import { AGENT_VERSION } from "../version";

export interface HelloInput {
  token: string;
  name: string;
  pool: string;
  maxConnections: number;
  labels?: Record<string, string>;
  sourceAddresses?: string[];
  /** The persisted id (agent-identity.ts); absent, the hub adds a row per process. */
  agentKey?: string;
}

/** One per process: the instance id lets the hub tell a reconnect of this process from a new agent. */
const INSTANCE_ID = randomUUID();

/** The handshake `auth` payload: who this agent is and what it can carry. */
export function buildAgentHello(input: HelloInput): AgentHello {
  return agentHelloSchema.parse({
    token: input.token,
    instanceId: INSTANCE_ID,
    ...(input.agentKey ? { agentKey: input.agentKey } : {}),
    name: input.name,
    version: AGENT_VERSION,
    pool: input.pool,
    labels: input.labels ?? {},
    capacity: {
      cores: availableParallelism(),
      memoryMb: Math.floor(totalmem() / 1_048_576),
      maxConnections: input.maxConnections,
      sourceAddresses: input.sourceAddresses ?? [],
    },
  });
}
