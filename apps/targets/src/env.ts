import { z } from "zod";
import { loadEnvOrExit, logLevelSchema, portSchema as port } from "@volley/contracts";

const envSchema = z.object({
  TARGETS_HOST: z.string().min(1, "set it to an interface address such as 127.0.0.1 or 0.0.0.0").default("127.0.0.1"),
  WS_ECHO_PORT: port(9001),
  SOCKETIO_ECHO_PORT: port(9002),
  SOCKJS_ECHO_PORT: port(9003),
  SOCKETCLUSTER_ECHO_PORT: port(9006),
  LOG_LEVEL: logLevelSchema,
});

export type TargetsEnv = z.infer<typeof envSchema>;

/** Reads and validates the environment once; a bad value stops the process with one line naming it. */
export function loadEnv(source: NodeJS.ProcessEnv = process.env): TargetsEnv {
  return loadEnvOrExit(envSchema, source);
}
