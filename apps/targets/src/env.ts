import { availableParallelism } from "node:os";
import { z } from "zod";
import { loadEnvOrExit, logLevelSchema, portSchema as port } from "@volley/contracts";
import { HOLD_MODES } from "./echo-hold";

const envSchema = z.object({
  TARGETS_HOST: z.string().min(1, "set it to an interface address such as 127.0.0.1 or 0.0.0.0").default("127.0.0.1"),
  WS_ECHO_PORT: port(9001),
  SOCKETIO_ECHO_PORT: port(9002),
  SOCKJS_ECHO_PORT: port(9003),
  STOMP_ECHO_PORT: port(9004),
  /** The HTTP reference server (echo, SSE, long and short polling), one process. */
  HTTP_ECHO_PORT: port(9005),
  SOCKETCLUSTER_ECHO_PORT: port(9006),
  /** The same HTTP server run by HTTP_CLUSTER_WORKERS node:cluster workers, for the cluster comparison. */
  HTTP_CLUSTER_PORT: port(9007),
  HTTP_CLUSTER_WORKERS: z.coerce
    .number({ error: "set it to a number of worker processes such as 4, or 0 for none" })
    .int("set it to a whole number of worker processes such as 4, or 0 for none")
    .min(0, "set it to 0 (no cluster target) or more worker processes")
    .max(256, "set it to at most 256 worker processes")
    .default(() => availableParallelism()),
  /** The MQTT broker (aedes), MQTT 3.1.1 over WebSocket at /mqtt. */
  MQTT_BROKER_PORT: port(9017),
  /** 1 also starts the test apps that behave like real ones (issue 16), on the seven ports below; off by default so the demo stack and the tests that start targets keep their ports. */
  TARGETS_TEST_APPS: z
    .enum(["0", "1"], { error: "set it to 1 to also start the test apps (ports 9010-9016) or 0 to leave them off" })
    .default("0")
    .transform((v) => v === "1"),
  SOCKETIO_CHAT_PORT: port(9010),
  JSONRPC_WS_PORT: port(9011),
  GRAPHQL_WS_PORT: port(9012),
  SOCKETCLUSTER_PINGPONG_PORT: port(9013),
  SSE_NEWS_PORT: port(9014),
  LONGPOLL_CHAT_PORT: port(9015),
  /** The Spring-like STOMP-over-SockJS chat (`/ws`). */
  STOMP_CHAT_PORT: port(9016),
  /** How every target waits out an echo's hold: `precise` polls the last ~2 ms (a core at 100 % under load; latency benches only). */
  ECHO_HOLD: z.enum(HOLD_MODES, { error: "set it to timer (whole-ms timers, the default) or precise (µs, costs CPU)" }).default("timer"),
  LOG_LEVEL: logLevelSchema,
});

export type TargetsEnv = z.infer<typeof envSchema>;

/** Reads and validates the environment once; a bad value stops the process with one line naming it. */
export function loadEnv(source: NodeJS.ProcessEnv = process.env): TargetsEnv {
  return loadEnvOrExit(envSchema, source);
}
