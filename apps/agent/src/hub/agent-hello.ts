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
  /**
   * Engine threads (AGENT_WORKERS; 0 = the main thread): the cores the agent's load can use, which
   * is what the hub's saturation estimate counts. Absent: every core.
   */
  workers?: number;
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
      cores: input.workers === undefined ? availableParallelism() : Math.min(availableParallelism(), Math.max(1, input.workers)),
      memoryMb: Math.floor(totalmem() / 1_048_576),
      maxConnections: input.maxConnections,
      sourceAddresses: input.sourceAddresses ?? [],
    },
  });
}
