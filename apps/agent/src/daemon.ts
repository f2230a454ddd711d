/** The hub daemon: connects to the hub and runs the shards it is given until SIGINT/SIGTERM. */
import { pino } from "pino";
import { loadEnv } from "./env";
import { buildAgentHello } from "./hub/agent-hello";
import { HubClient } from "./hub/hub-client";

const env = loadEnv();
const log = pino({ name: "agent", level: env.LOG_LEVEL });

const hello = buildAgentHello({
  token: env.AGENT_TOKEN,
  name: env.AGENT_NAME,
  pool: env.AGENT_POOL,
  maxConnections: env.AGENT_MAX_CONNECTIONS,
  sourceAddresses: env.AGENT_SOURCE_ADDRESSES,
});
const client = new HubClient({
  hubUrl: env.HUB_URL,
  hello,
  log,
  onConnected: () => log.info(`agent ${env.AGENT_NAME} connected to ${env.HUB_URL}`),
});
log.info({ instanceId: hello.instanceId, pool: env.AGENT_POOL, capacity: hello.capacity }, `agent ${env.AGENT_NAME} starting; hub ${env.HUB_URL}`);
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
