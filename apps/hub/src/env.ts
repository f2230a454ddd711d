import { z } from "zod";
import { loadEnvOrExit, logLevelSchema, portSchema } from "@volley/contracts";
import { AdmissionEnvError, parseQuota, parseTargetAllowlist } from "@volley/admission";
import { parseSecretsKey } from "@volley/db";

const required = (example: string, protocols: RegExp) =>
  z.string({ error: `not set — set it to a URL like ${example} (npm start sets it for you)` }).regex(protocols, `must be a URL like ${example}`);

/** A number of days (at least 1) or "off"; `fallback` when unset. */
const retentionDays = (name: string, fallback: number | null) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === "") return fallback;
      if (v === "off") return null;
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1) {
        ctx.addIssue({ code: "custom", message: `set ${name} to a whole number of days (at least 1), or "off" to keep them forever` });
        return z.NEVER;
      }
      return n;
    });

/** A whole number (at least 1) of `unit`; `fallback` when unset. */
const count = (unit: string, fallback: number) =>
  z.coerce
    .number({ error: `set it to a whole number of ${unit}, e.g. ${fallback}` })
    .int(`set it to a whole number of ${unit}, e.g. ${fallback}`)
    .min(1, `set it to at least 1 (${unit}), e.g. ${fallback}`)
    .default(fallback);

/** A variable @volley/admission parses (web's env.ts uses the same parser): its problem and fix become the issue. */
const admissionVariable = <T>(parse: (value: string | undefined) => T) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      try {
        return parse(v);
      } catch (err) {
        if (!(err instanceof AdmissionEnvError)) throw err;
        ctx.addIssue({ code: "custom", message: err.problem });
        return z.NEVER;
      }
    });

const validKey = (v: string) => {
  try {
    parseSecretsKey(v);
    return true;
  } catch {
    return false;
  }
};

const envSchema = z
  .object({
    DATABASE_URL: required("postgres://user:pass@127.0.0.1:5432/volley", /^postgres(ql)?:\/\//),
    REDIS_URL: required("redis://127.0.0.1:6379", /^rediss?:\/\//),
    HUB_HOST: z.string().min(1, "set it to an interface address such as 127.0.0.1 or 0.0.0.0").default("127.0.0.1"),
    HUB_PORT: portSchema(3001),
    // The self-hosted bootstrap: one shared secret any agent may present (default org, the pool it names).
    // Unset, agents need a join token (vat_…) created per organization in the web UI. `npm start`
    // sets it to apps/agent's default so a local stack works without setup.
    AGENT_TOKEN: z
      .string()
      .min(8, "use at least 8 characters, or unset it so only join tokens admit agents")
      .refine((t) => !t.startsWith("vat_"), "a join token (vat_…) belongs to an agent, not the hub; unset AGENT_TOKEN or use another secret")
      .optional(),
    // `hosted` (a public SaaS, as web's VOLLEY_MODE): webhook deliveries and agents' load reach only
    // public addresses, checked at send/connect time. Set it to the same value as web's.
    VOLLEY_MODE: z.enum(["hosted", "self-hosted"], { error: "must be hosted or self-hosted — unset it for a self-hosted install" }).default("self-hosted"),
    // Which targets a scheduled run may load, checked by the hub when the schedule fires as web checks
    // a run it queues (@volley/admission): give the hub web's values. Self-hosted: loopback plus these
    // comma-separated host names, *.suffix, addresses or CIDR ranges (* for any).
    VOLLEY_TARGET_ALLOWLIST: admissionVariable(parseTargetAllowlist),
    // Hosted: an org's quotas unless it has its own (orgs.quotas): connections, messages/s, run length in seconds.
    VOLLEY_QUOTA_CONNECTIONS: admissionVariable((v) => parseQuota("VOLLEY_QUOTA_CONNECTIONS", v)),
    VOLLEY_QUOTA_RATE: admissionVariable((v) => parseQuota("VOLLEY_QUOTA_RATE", v)),
    VOLLEY_QUOTA_DURATION: admissionVariable((v) => parseQuota("VOLLEY_QUOTA_DURATION", v)),
    // Webhook signing secrets are sealed with this key (AES-256-GCM, @volley/db secret-box): 32 bytes,
    // base64 (openssl rand -base64 32), the same value as web's. Rotation: the new key here, the
    // previous ones comma separated in VOLLEY_SECRETS_KEY_OLD; rows re-seal under the new key as they
    // are read. Unset (self-hosted only): secrets stay as stored, with a warning.
    VOLLEY_SECRETS_KEY: z.string().refine(validKey, "must be 32 random bytes in base64 — generate one with `openssl rand -base64 32`").optional(),
    VOLLEY_SECRETS_KEY_OLD: z
      .string()
      .refine(
        (v) =>
          v
            .split(",")
            .map((k) => k.trim())
            .filter(Boolean)
            .every(validKey),
        "must be comma-separated 32-byte base64 keys (the previous VOLLEY_SECRETS_KEY values)",
      )
      .optional(),
    // Pools one organization may have agents in on this hub at once; each holds a shard worker and a
    // Redis connection (released a minute after a pool's last agent leaves). One more is refused.
    HUB_MAX_POOLS_PER_ORG: z.coerce
      .number({ error: "set it to a whole number of pools, e.g. 50" })
      .int("set it to a whole number of pools, e.g. 50")
      .min(1, "set it to at least 1 pool, e.g. 50")
      .default(50),
    // Pools all organizations owned by one account (orgs' owner; one may own VOLLEY_MAX_ORGS_PER_USER)
    // may have on this hub at once, so owning several orgs does not multiply HUB_MAX_POOLS_PER_ORG.
    HUB_MAX_POOLS_PER_ACCOUNT: count("pools", 50),
    // Agents one join token (or the shared AGENT_TOKEN) may have registered: a hello that would add one
    // more is refused (reconnects and restarts with the same AGENT_STATE_DIR keep their row).
    HUB_MAX_AGENTS_PER_TOKEN: count("agents", 200),
    // What agents' frames may cost this hub's event loop (README "Agent limits"), each
    // averaged over HUB_INGEST_WINDOW_S seconds. An agent past one, or sending more refused frames than
    // HUB_INGEST_MAX_REFUSED_FRAMES per window, is cut off: its shard errors naming the setting, it is
    // disconnected and refused for a minute. Other agents and orgs are not touched.
    HUB_INGEST_WINDOW_S: count("seconds", 10),
    HUB_INGEST_AGENT_MS_PER_S: count("milliseconds", 100),
    HUB_INGEST_ORG_MS_PER_S: count("milliseconds", 250),
    HUB_INGEST_AGENT_BYTES_PER_S: count("bytes", 4 * 1024 * 1024),
    HUB_INGEST_ORG_BYTES_PER_S: count("bytes", 16 * 1024 * 1024),
    HUB_INGEST_MAX_REFUSED_FRAMES: count("frames", 50),
    // One frame's encoded histograms together; a larger frame is refused before any is inflated.
    HUB_MAX_FRAME_HISTOGRAM_BYTES: count("bytes", 1024 * 1024),
    // Bearer token GET /metrics (Prometheus text format, docs/observability.md) requires. Unset: open to
    // whoever reaches the hub port in self-hosted mode; hosted mode serves /metrics only with it set.
    HUB_METRICS_TOKEN: z.string().min(16, "use at least 16 characters (openssl rand -hex 16), or unset it").optional(),
    // Retention of finished runs, in days, or "off" (docs/run-data.md). Raw
    // per-agent frames go after RUN_FRAMES_RETENTION_DAYS (default 30): the run page and API read the
    // merged rows, which stay. Whole runs go after RUN_RETENTION_DAYS (default off: kept forever).
    RUN_FRAMES_RETENTION_DAYS: retentionDays("RUN_FRAMES_RETENTION_DAYS", 30),
    RUN_RETENTION_DAYS: retentionDays("RUN_RETENTION_DAYS", null),
    // Agents not heard from for this many days, holding no shard, leave the Agents list (default 7; an
    // agent that comes back enrolls anew): ephemeral agents and reconnect storms leave no rows forever.
    AGENT_RETENTION_DAYS: retentionDays("AGENT_RETENTION_DAYS", 7),
    // The origin users reach web at (web's VOLLEY_PUBLIC_URL): links in run.finished webhooks point
    // there. `npm start` sets it to http://localhost:<WEB_PORT> when you have not.
    VOLLEY_PUBLIC_URL: z
      .string()
      .optional()
      .transform((v) => v || undefined)
      .refine((v) => v === undefined || /^https?:\/\/[^/]+/.test(v), "must be web's origin, like https://volley.example.com"),
    LOG_LEVEL: logLevelSchema,
  })
  .refine((e) => e.VOLLEY_MODE !== "hosted" || e.VOLLEY_SECRETS_KEY !== undefined, {
    path: ["VOLLEY_SECRETS_KEY"],
    message: "not set — hosted mode needs it; generate one with `openssl rand -base64 32` and give web and hub the same value",
  });

export type HubEnv = z.infer<typeof envSchema>;

/** The only reader of process.env: validates it once; a bad or missing value exits with one line naming it. */
export function loadEnv(source: NodeJS.ProcessEnv = process.env): HubEnv {
  // URLs may carry passwords and the token is a secret: name them, never print them.
  return loadEnvOrExit(envSchema, source, (name) => name.endsWith("TOKEN") || name.endsWith("_URL") || name.startsWith("VOLLEY_SECRETS_KEY"));
}
