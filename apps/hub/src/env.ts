import { z } from "zod";

const required = (example: string, protocols: RegExp) =>
  z
    .string({ error: `not set — set it to a URL like ${example} (npm start sets it for you)` })
    .regex(protocols, `must be a URL like ${example}`);

const envSchema = z.object({
  DATABASE_URL: required("postgres://user:pass@127.0.0.1:5432/volley", /^postgres(ql)?:\/\//),
  REDIS_URL: required("redis://127.0.0.1:6379", /^rediss?:\/\//),
  HUB_HOST: z.string().min(1, "set it to an interface address such as 127.0.0.1 or 0.0.0.0").default("127.0.0.1"),
  HUB_PORT: z.coerce
    .number({ error: "set it to a port number such as 3001" })
    .int("set it to a whole port number such as 3001")
    .min(0, "set it to a port between 0 and 65535")
    .max(65535, "set it to a port between 0 and 65535")
    .default(3001),
  // Shared with apps/agent's default so a local `npm start` works without setup; enrollment tokens replace it later.
  AGENT_TOKEN: z.string().min(8, "use at least 8 characters").default("dev-local-agent-token"),
  LOG_LEVEL: z
    .enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"], { error: "use one of fatal, error, warn, info, debug, trace, silent" })
    .default("info"),
});

export type HubEnv = z.infer<typeof envSchema>;

/** The only reader of process.env: validates it once; a bad or missing value exits with one line naming it. */
export function loadEnv(source: NodeJS.ProcessEnv = process.env): HubEnv {
  // Empty strings mean "unset" so `HUB_PORT= npm start` falls back to the default.
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== ""));
  const result = envSchema.safeParse(cleaned);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const name = String(issue?.path[0] ?? "environment");
  // URLs may carry passwords and the token is a secret: name them, never print them.
  const secret = name.endsWith("TOKEN") || name.endsWith("_URL");
  const shown = source[name] && !secret ? `=${JSON.stringify(source[name])}` : "";
  const what = source[name] === undefined ? "missing" : "invalid";
  process.stderr.write(`${what} environment variable ${name}${shown}: ${issue?.message}\n`);
  process.exit(1);
}
