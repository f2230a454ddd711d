/** The hub daemon: connects to the hub and runs the shards it is given until SIGINT/SIGTERM. */
import { pino } from "pino";
import { loadEnv } from "./env";
import { buildAgentHello } from "./hub/agent-hello";
import { loadAgentIdentity, type AgentIdentity } from "./hub/agent-identity";
import { HubClient } from "./hub/hub-client";

const env = loadEnv();
const log = pino({ name: "agent", level: env.LOG_LEVEL });

let identity: AgentIdentity | null = null;
try {
  identity = loadAgentIdentity(env.AGENT_STATE_DIR);
} catch (err) {
  // Still a working agent, as before persisted ids: only its restarts show up as new agents.
  log.warn(
    { err: err instanceof Error ? err.message : String(err) },
    `cannot keep this agent's identity in AGENT_STATE_DIR=${env.AGENT_STATE_DIR}; each restart will be listed as a new agent — set AGENT_STATE_DIR to a writable directory`,
  );
}

const hello = buildAgentHello({
  token: env.AGENT_TOKEN,
  name: env.AGENT_NAME,
  pool: env.AGENT_POOL,
  maxConnections: env.AGENT_MAX_CONNECTIONS,
  sourceAddresses: env.AGENT_SOURCE_ADDRESSES,
  agentKey: identity?.agentKey,
  workers: env.AGENT_WORKERS,
});
const client = new HubClient({
  hubUrl: env.HUB_URL,
  hello,
  log,
  workers: env.AGENT_WORKERS,
  onConnected: () => log.info(`agent ${env.AGENT_NAME} connected to ${env.HUB_URL}`),
});
// The key proves this agent's identity to the hub: logs get a prefix to recognise it by, never the whole key.
log.info(
  {
    instanceId: hello.instanceId,
    agentKey: hello.agentKey ? `${hello.agentKey.slice(0, 12)}…` : undefined,
    identityFile: identity?.file,
    pool: env.AGENT_POOL,
    capacity: hello.capacity,
    engineWorkers: env.AGENT_WORKERS,
  },
  `agent ${env.AGENT_NAME} starting; hub ${env.HUB_URL}`,
);
client.start();

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info(`${signal} received: aborting any shard, flushing frames, disconnecting`);
  await client.stop(5000);
  process.exit(0);
}
process.on("SIGINT", () => void shutdown("SIGINT"));
process.on("SIGTERM", () => void shutdown("SIGTERM"));
