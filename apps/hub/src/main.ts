import { pino } from "pino";
import { parseSecretKeys } from "@volley/db";
import { loadEnv } from "./env";
import { startHub } from "./hub";
import { errorMessage } from "./util/wait";

const env = loadEnv();
const log = pino({ name: "hub", level: env.LOG_LEVEL });

const hub = await startHub({
  databaseUrl: env.DATABASE_URL,
  redisUrl: env.REDIS_URL,
  host: env.HUB_HOST,
  port: env.HUB_PORT,
  agentToken: env.AGENT_TOKEN,
  maxPoolsPerOrg: env.HUB_MAX_POOLS_PER_ORG,
  maxPoolsPerAccount: env.HUB_MAX_POOLS_PER_ACCOUNT,
  maxAgentsPerToken: env.HUB_MAX_AGENTS_PER_TOKEN,
  ingest: {
    windowMs: env.HUB_INGEST_WINDOW_S * 1000,
    agentMsPerS: env.HUB_INGEST_AGENT_MS_PER_S,
    orgMsPerS: env.HUB_INGEST_ORG_MS_PER_S,
    agentBytesPerS: env.HUB_INGEST_AGENT_BYTES_PER_S,
    orgBytesPerS: env.HUB_INGEST_ORG_BYTES_PER_S,
    maxRefusedFrames: env.HUB_INGEST_MAX_REFUSED_FRAMES,
    maxFrameHistogramBytes: env.HUB_MAX_FRAME_HISTOGRAM_BYTES,
  },
  mode: env.VOLLEY_MODE,
  targetPolicy: {
    allowlist: env.VOLLEY_TARGET_ALLOWLIST,
    quotas: { connections: env.VOLLEY_QUOTA_CONNECTIONS, messagesPerSecond: env.VOLLEY_QUOTA_RATE, durationSeconds: env.VOLLEY_QUOTA_DURATION },
  },
  secretsKeys: env.VOLLEY_SECRETS_KEY ? parseSecretKeys(env.VOLLEY_SECRETS_KEY, env.VOLLEY_SECRETS_KEY_OLD) : null,
  metricsToken: env.HUB_METRICS_TOKEN ?? null,
  publicUrl: env.VOLLEY_PUBLIC_URL ?? null,
  retention: { framesDays: env.RUN_FRAMES_RETENTION_DAYS, runsDays: env.RUN_RETENTION_DAYS, agentsDays: env.AGENT_RETENTION_DAYS },
  log,
}).catch((err: NodeJS.ErrnoException) => {
  // checkDatabase/checkRedis already say what is wrong and how to fix it, in one line.
  const hint = err.code === "EADDRINUSE" ? ` (port in use: set HUB_PORT to a free port)` : "";
  process.stderr.write(`hub could not start: ${errorMessage(err)}${hint}\n`);
  process.exit(1);
});
log.info(`hub listening on http://${env.HUB_HOST}:${hub.port} (agent gateway /agent)`);
if (!env.VOLLEY_SECRETS_KEY)
  log.warn("VOLLEY_SECRETS_KEY is not set; webhook signing secrets are stored unencrypted — set it (openssl rand -base64 32) for web and hub");
log.info(
  env.AGENT_TOKEN ? "agents admitted with join tokens or the shared AGENT_TOKEN (bootstrap)" : "agents admitted with join tokens only (AGENT_TOKEN unset)",
);

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) {
    // A second signal means "now": skip what is left of the graceful path.
    log.warn(`${signal} received again, exiting at once`);
    process.exit(1);
  }
  stopping = true;
  log.info(`${signal} received, stopping hub (send it again to exit at once)`);
  // Graceful shutdown is itself bounded, but never trust that with Redis or PostgreSQL gone.
  setTimeout(() => {
    log.error("hub did not stop within 60 s; exiting");
    process.exit(1);
  }, 60_000).unref();
  try {
    await hub.close();
    process.exit(0);
  } catch (err) {
    log.error({ err: errorMessage(err) }, "unclean shutdown");
    process.exit(1);
  }
}
process.on("SIGINT", () => void shutdown("SIGINT"));
process.on("SIGTERM", () => void shutdown("SIGTERM"));
