import { z } from "zod";

/** A listening port; 0 picks a free one (tests read the real port from the log line). */
function port(fallback: number) {
  return z.coerce
    .number({ error: `set it to a port number such as ${fallback}` })
    .int(`set it to a whole port number such as ${fallback}`)
    .min(0, "set it to a port between 0 and 65535")
    .max(65535, "set it to a port between 0 and 65535")
    .default(fallback);
}

const envSchema = z.object({
  TARGETS_HOST: z.string().min(1, "set it to an interface address such as 127.0.0.1 or 0.0.0.0").default("127.0.0.1"),
  WS_ECHO_PORT: port(9001),
  SOCKETIO_ECHO_PORT: port(9002),
  SOCKJS_ECHO_PORT: port(9003),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"], {
    error: "use one of fatal, error, warn, info, debug, trace, silent",
  }).default("info"),
});

export type TargetsEnv = z.infer<typeof envSchema>;

/** Reads and validates the environment once; a bad value stops the process with one line naming it. */
export function loadEnv(source: NodeJS.ProcessEnv = process.env): TargetsEnv {
  // Empty strings mean "unset" so `WS_ECHO_PORT= npm start` falls back to the default.
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== ""));
  const result = envSchema.safeParse(cleaned);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const name = String(issue?.path[0] ?? "environment");
  process.stderr.write(`invalid environment variable ${name}=${JSON.stringify(source[name] ?? "")}: ${issue?.message}\n`);
  process.exit(1);
}
