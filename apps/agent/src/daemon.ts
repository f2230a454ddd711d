/** The hub daemon: connects to the hub and runs the shards it is given until SIGINT/SIGTERM. */
import { pino } from "pino";
import { loadEnv } from "./env";
import { agentHelloFromEnv, MISSING_TOKEN } from "./hub/agent-setup";
import { HubClient } from "./hub/hub-client";

const env = loadEnv();
const log = pino({ name: "agent", level: env.LOG_LEVEL });
const setup = agentHelloFromEnv(env, log);
if (!setup) {
  process.stderr.write(`${MISSING_TOKEN}\n`);
  process.exit(1);
}
const { hello, identity } = setup;
let everConnected = false;
const client = new HubClient({
  hubUrl: env.HUB_URL,
  hello,
  log,
  workers: env.AGENT_WORKERS,
  onConnected: () => {
    everConnected = true;
    log.info(`agent ${env.AGENT_NAME} connected to ${env.HUB_URL}`);
  },
  // Refused before it ever joined (a wrong token, an agent older than the hub accepts): retrying
  // cannot help, so say the hub's words and exit non-zero. Refusals after it joined (a token revoked,
  // a hub mid-deploy) are retried, as a service should.
  onRefused: (reason) => {
    if (everConnected) return;
    log.error(`the hub at ${env.HUB_URL} refused this agent: ${reason}`);
    void client.stop(1000).finally(() => process.exit(2));
  },
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
