/**
 * `volley-agent check`: one handshake with the hub as the daemon would make it (HUB_URL,
 * AGENT_TOKEN, the identity in AGENT_STATE_DIR) and a clock comparison; prints what it found and
 * exits 0 (ready), 2 (refused: the token or the agent's version), 3 (the hub did not answer) or
 * 4 (this host's clock is far off). The installer runs it before it starts anything.
 */
import { pino } from "pino";
import { loadEnv } from "./env";
import { agentHelloFromEnv, MISSING_TOKEN } from "./hub/agent-setup";
import { checkHub } from "./hub/hub-check";

const EXIT = { refused: 2, unreachable: 3, clock: 4 } as const;

export async function runCheck(): Promise<number> {
  const env = loadEnv();
  const log = pino({ name: "agent", level: env.LOG_LEVEL === "info" ? "warn" : env.LOG_LEVEL });
  const setup = agentHelloFromEnv(env, log);
  if (!setup) {
    process.stderr.write(`${MISSING_TOKEN}\n`);
    return 1;
  }
  const result = await checkHub(env.HUB_URL, setup.hello);
  if (!result.ok) {
    process.stderr.write(`volley-agent check: ${result.message}\n`);
    return EXIT[result.problem];
  }
  process.stdout.write(
    `volley-agent check: the hub at ${env.HUB_URL} accepted agent ${env.AGENT_NAME} (${result.agentId}); clock within ${Math.abs(result.offsetMs).toFixed(0)} ms of the hub's\n`,
  );
  return 0;
}
