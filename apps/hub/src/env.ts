import { z } from "zod";
import { loadEnvOrExit, logLevelSchema, portSchema } from "@volley/contracts";

const required = (example: string, protocols: RegExp) =>
  z
    .string({ error: `not set — set it to a URL like ${example} (npm start sets it for you)` })
    .regex(protocols, `must be a URL like ${example}`);

const envSchema = z.object({
  DATABASE_URL: required("postgres://user:pass@127.0.0.1:5432/volley", /^postgres(ql)?:\/\//),
  REDIS_URL: required("redis://127.0.0.1:6379", /^rediss?:\/\//),
  HUB_HOST: z.string().min(1, "set it to an interface address such as 127.0.0.1 or 0.0.0.0").default("127.0.0.1"),
  HUB_PORT: portSchema(3001),
  // Shared with apps/agent's default so a local `npm start` works without setup; enrollment tokens replace it later.
  AGENT_TOKEN: z.string().min(8, "use at least 8 characters").default("dev-local-agent-token"),
  LOG_LEVEL: logLevelSchema,
});

export type HubEnv = z.infer<typeof envSchema>;

/** The only reader of process.env: validates it once; a bad or missing value exits with one line naming it. */
export function loadEnv(source: NodeJS.ProcessEnv = process.env): HubEnv {
  // URLs may carry passwords and the token is a secret: name them, never print them.
  return loadEnvOrExit(envSchema, source, (name) => name.endsWith("TOKEN") || name.endsWith("_URL"));
}
