import { startApp, type ManagedProcess } from "@volley/devstack";
import { TEST_AGENT_TOKEN } from "./hub-harness";

/** The demo targets' ports, each left to the OS (only the ws echo is used; the rest must not collide with anything). */
export const TARGET_PORTS_ANY = {
  WS_ECHO_PORT: "0",
  SOCKETIO_ECHO_PORT: "0",
  SOCKJS_ECHO_PORT: "0",
  SOCKETCLUSTER_ECHO_PORT: "0",
  STOMP_ECHO_PORT: "0",
  HTTP_ECHO_PORT: "0",
  MQTT_BROKER_PORT: "0",
  HTTP_CLUSTER_WORKERS: "0",
} as const;

export interface RealAgent {
  /** The ws echo target's URL. */
  echoUrl: string;
  /** Every line the targets and the agent printed, prefixed with who. */
  output: string[];
  /** The targets and agent processes, to stop in reverse. */
  processes: ManagedProcess[];
}

/**
 * The demo targets and one real agent process (as `npm start` runs them) joined to the hub at
 * `hubUrl` with the bootstrap token in `pool`: for hub tests that need a real engine at the other end.
 */
export async function startTargetsAndAgent(hubUrl: string, name: string, pool: string): Promise<RealAgent> {
  const output: string[] = [];
  const processes: ManagedProcess[] = [];
  const targets = startApp("targets", { ...process.env, ...TARGET_PORTS_ANY }, (l) => output.push(`[targets] ${l}`));
  processes.push(targets);
  const echoUrl = (await targets.waitFor(/ws echo listening on ws:\/\/\S+/, 60_000)).match(/ws:\/\/[^\s"]+/)![0];
  const agent = startApp(
    "agent",
    { ...process.env, HUB_URL: hubUrl, AGENT_TOKEN: TEST_AGENT_TOKEN, AGENT_NAME: name, AGENT_POOL: pool, LOG_LEVEL: "info" },
    (l) => output.push(`[agent] ${l}`),
  );
  processes.push(agent);
  await agent.waitFor(/connected to/, 60_000);
  return { echoUrl, output, processes };
}
