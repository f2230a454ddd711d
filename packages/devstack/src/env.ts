import { fileURLToPath } from "node:url";
import { z } from "zod";

const REPO_ROOT = fileURLToPath(new URL("../../..", import.meta.url));

const port = (fallback: number) => z.coerce.number().int().min(1).max(65535).default(fallback);
const url = (protocols: RegExp, example: string) =>
  z
    .string()
    .optional()
    .refine((v) => v === undefined || v === "" || protocols.test(v), { message: `must be a URL like ${example}` })
    .transform((v) => (v ? v : undefined));

const schema = z.object({
  DATABASE_URL: url(/^postgres(ql)?:\/\//, "postgres://user:pass@host:5432/volley"),
  REDIS_URL: url(/^rediss?:\/\//, "redis://127.0.0.1:6379"),
  VOLLEY_DATA_DIR: z.string().default(`${REPO_ROOT}.volley`),
  VOLLEY_PG_PORT: port(54329),
  VOLLEY_REDIS_PORT: port(6390),
  WEB_PORT: port(3000),
  HUB_PORT: port(3001),
  WS_ECHO_PORT: port(9001),
  SOCKETIO_ECHO_PORT: port(9002),
  SOCKJS_ECHO_PORT: port(9003),
  STOMP_ECHO_PORT: port(9004),
  HTTP_ECHO_PORT: port(9005),
  SOCKETCLUSTER_ECHO_PORT: port(9006),
  HTTP_CLUSTER_PORT: port(9007),
  MQTT_BROKER_PORT: port(9017),
  /** Set, these replace the secrets npm start generates into VOLLEY_DATA_DIR (auth-secret, secrets-key). */
  AUTH_SECRET: z
    .string()
    .optional()
    .transform((v) => v || undefined),
  VOLLEY_SECRETS_KEY: z
    .string()
    .optional()
    .transform((v) => v || undefined),
  /** Test runs: use these servers instead of starting throwaway ones. */
  VOLLEY_TEST_DATABASE_URL: url(/^postgres(ql)?:\/\//, "postgres://postgres@127.0.0.1:5432/postgres"),
  VOLLEY_TEST_REDIS_URL: url(/^rediss?:\/\//, "redis://127.0.0.1:6379"),
  CI: z.string().optional(),
});

export type DevstackEnv = z.infer<typeof schema>;

/** Reads and validates the environment once; a bad value stops the process with the variable named. */
export function loadEnv(source: NodeJS.ProcessEnv = process.env): DevstackEnv {
  const parsed = schema.safeParse(source);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    throw new Error(`invalid environment — ${lines.join("; ")}`);
  }
  return parsed.data;
}

export const repoRoot = REPO_ROOT;
