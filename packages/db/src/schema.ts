import {
  type AnyPgColumn,
  bigserial,
  boolean,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";
import type {
  AgentCapacity,
  AgentStatus,
  Health,
  IntervalFrame,
  IntervalPoint,
  Plan,
  RateChange,
  RunAnalysis,
  RunStatus,
  RunSummary,
  ShardStatus,
  WebhookEvent,
  WebhookFormat,
} from "@volley/contracts";

const createdAt = () => timestamp("created_at", { withTimezone: true }).notNull().defaultNow();

/**
 * Organizations. better-auth's organization plugin uses this table as its `organization` model
 * (web's auth config maps it), so its JS keys are better-auth's field names.
 */
export const orgs = pgTable(
  "orgs",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    slug: text("slug"),
    logo: text("logo"),
    metadata: text("metadata"),
    /** Hosted mode: this org's own limits, overriding the install's VOLLEY_QUOTA_* defaults field by field. */
    quotas: jsonb("quotas").$type<OrgQuotas>(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("orgs_slug_idx").on(t.slug)],
);

/** Hosted-mode limits on what an org's runs may ask for at once (see packages/admission target-policy.ts). */
export interface OrgQuotas {
  connections?: number;
  messagesPerSecond?: number;
  durationSeconds?: number;
}

// Accounts (better-auth core + organization plugin). JS keys are better-auth's field names.
const updatedAt = () => timestamp("updated_at", { withTimezone: true }).notNull().defaultNow();

export const users = pgTable(
  "users",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    email: text("email").notNull(),
    emailVerified: boolean("email_verified").notNull().default(false),
    image: text("image"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex("users_email_idx").on(t.email)],
);

export const sessions = pgTable(
  "sessions",
  {
    id: text("id").primaryKey(),
    token: text("token").notNull(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    ipAddress: text("ip_address"),
    userAgent: text("user_agent"),
    activeOrganizationId: text("active_organization_id"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex("sessions_token_idx").on(t.token), index("sessions_user_idx").on(t.userId)],
);

export const accounts = pgTable(
  "accounts",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    providerId: text("provider_id").notNull(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    accessToken: text("access_token"),
    refreshToken: text("refresh_token"),
    idToken: text("id_token"),
    accessTokenExpiresAt: timestamp("access_token_expires_at", { withTimezone: true }),
    refreshTokenExpiresAt: timestamp("refresh_token_expires_at", { withTimezone: true }),
    scope: text("scope"),
    /** better-auth's scrypt hash of the password (never the password). */
    password: text("password"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("accounts_user_idx").on(t.userId)],
);

export const verifications = pgTable(
  "verifications",
  {
    id: text("id").primaryKey(),
    identifier: text("identifier").notNull(),
    value: text("value").notNull(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("verifications_identifier_idx").on(t.identifier)],
);

export type OrgRole = "owner" | "admin" | "member" | "viewer";

export const members = pgTable(
  "members",
  {
    id: text("id").primaryKey(),
    organizationId: text("org_id")
      .notNull()
      .references(() => orgs.id, { onDelete: "cascade" }),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    role: text("role").$type<OrgRole>().notNull().default("member"),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("members_org_user_idx").on(t.organizationId, t.userId), index("members_user_idx").on(t.userId)],
);

export const invitations = pgTable(
  "invitations",
  {
    id: text("id").primaryKey(),
    organizationId: text("org_id")
      .notNull()
      .references(() => orgs.id, { onDelete: "cascade" }),
    email: text("email").notNull(),
    role: text("role"),
    status: text("status").notNull().default("pending"),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    inviterId: text("inviter_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    createdAt: createdAt(),
  },
  (t) => [index("invitations_org_idx").on(t.organizationId), index("invitations_email_idx").on(t.email)],
);

export type ApiTokenScope = "read" | "run";

/**
 * API tokens for the REST API and CI. Only the SHA-256 of the secret is stored; it is shown once.
 * `prefix` tells tokens apart in lists. Revoked tokens stay (audit) and never authenticate.
 */
export const apiTokens = pgTable(
  "api_tokens",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    scopes: jsonb("scopes").$type<ApiTokenScope[]>().notNull(),
    tokenHash: text("token_hash").notNull(),
    prefix: text("prefix").notNull(),
    createdBy: text("created_by"),
    createdAt: createdAt(),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true }),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
  },
  (t) => [uniqueIndex("api_tokens_hash_idx").on(t.tokenHash), index("api_tokens_org_idx").on(t.orgId)],
);

/**
 * Outbound webhooks of an org: the hub POSTs each event to `url`, signed with HMAC-SHA256 of the
 * body under `secret`. The secret is stored sealed with AES-256-GCM (secret-box.ts; the hub must sign with it, so it cannot be
 * hashed) but the API shows it only once, at creation; to rotate it, delete the webhook and add it
 * again. Deleted webhooks stay as rows with `disabledAt` (audit) and never fire.
 */
export const webhooks = pgTable(
  "webhooks",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id, { onDelete: "cascade" }),
    url: text("url").notNull(),
    secret: text("secret").notNull(),
    events: jsonb("events").$type<WebhookEvent[]>().notNull(),
    /** The body's shape: Volley's own JSON ("generic") or a Slack incoming-webhook message ("slack"). */
    format: text("format").$type<WebhookFormat>().notNull().default("generic"),
    createdBy: text("created_by"),
    createdAt: createdAt(),
    disabledAt: timestamp("disabled_at", { withTimezone: true }),
  },
  (t) => [index("webhooks_org_idx").on(t.orgId)],
);

/** Each attempt to POST to a webhook (events and test deliveries) and what the receiver answered, for the webhooks page. */
export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    webhookId: text("webhook_id")
      .notNull()
      .references(() => webhooks.id, { onDelete: "cascade" }),
    /** The delivery id sent as x-volley-delivery (the same across retries of one event). */
    deliveryId: text("delivery_id").notNull(),
    event: text("event").notNull(),
    runId: text("run_id"),
    attempt: integer("attempt").notNull(),
    test: boolean("test").notNull().default(false),
    /** The receiver's HTTP status; null when none came (refused, timeout, network error). */
    status: integer("status"),
    ok: boolean("ok").notNull(),
    error: text("error"),
    /** The first bytes of the receiver's answer (text), to see what it said. */
    responseExcerpt: text("response_excerpt"),
    durationMs: doublePrecision("duration_ms").notNull(),
    at: timestamp("at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("webhook_deliveries_webhook_at_idx").on(t.webhookId, t.at)],
);

/**
 * Target hosts an org has proved it owns (hosted mode): the owner serves `token` at
 * /.well-known/volley-verify/<token> or publishes a TXT record `volley-verify=<token>`. The proof is
 * re-checked before every run; `verifiedAt` is the last time it held.
 */
export const targetHosts = pgTable(
  "target_hosts",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id, { onDelete: "cascade" }),
    host: text("host").notNull(),
    token: text("token").notNull(),
    createdBy: text("created_by"),
    createdAt: createdAt(),
    verifiedAt: timestamp("verified_at", { withTimezone: true }),
    /** How the last successful check found the token: "http" or "dns". */
    method: text("method"),
  },
  (t) => [uniqueIndex("target_hosts_org_host_idx").on(t.orgId, t.host)],
);

/** Who ran what against which host, and what that host resolved to at the time. Append-only. */
export const auditEvents = pgTable(
  "audit_events",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id, { onDelete: "cascade" }),
    /** `user:<id>`, `token:<id>` or `anonymous`. */
    actor: text("actor").notNull(),
    action: text("action").notNull(),
    runId: text("run_id"),
    targetHost: text("target_host"),
    addresses: jsonb("addresses").$type<string[]>(),
    at: timestamp("at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("audit_events_org_at_idx").on(t.orgId, t.at)],
);

export const agents = pgTable(
  "agents",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id),
    name: text("name").notNull(),
    pool: text("pool").notNull(),
    /**
     * The process's id (new at each start). Unique within an org only: it is printed in the
     * agent's log, so another org naming it must get a row of its own, never this one.
     */
    instanceId: text("instance_id").notNull(),
    /**
     * The id the agent keeps in its state file across restarts (null for agents that send none):
     * a restarted agent takes its row back instead of adding one. Unique across orgs, so an agent
     * never claims another org's row.
     */
    agentKey: text("agent_key"),
    version: text("version").notNull(),
    labels: jsonb("labels").$type<Record<string, string>>().notNull().default({}),
    capacity: jsonb("capacity").$type<AgentCapacity>().notNull(),
    /** The join token this agent enrolled with; revoking the token disconnects the agent. */
    tokenId: text("token_id").references(() => agentTokens.id, { onDelete: "set null" }),
    status: text("status").$type<AgentStatus>().notNull(),
    connectedAt: timestamp("connected_at", { withTimezone: true }),
    lastSeenAt: timestamp("last_seen_at", { withTimezone: true }),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("agents_org_instance_idx").on(t.orgId, t.instanceId),
    uniqueIndex("agents_agent_key_idx").on(t.agentKey),
    index("agents_org_pool_idx").on(t.orgId, t.pool),
  ],
);

/**
 * Join tokens agents enroll with. Only the SHA-256 of the secret is stored; `prefix` (the first
 * characters of the secret) lets people tell tokens apart in lists. Revoked tokens stay for audit.
 */
export const agentTokens = pgTable(
  "agent_tokens",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id),
    name: text("name").notNull(),
    /** Agents enrolled with this token join this pool unless they name another. */
    pool: text("pool").notNull().default("default"),
    tokenHash: text("token_hash").notNull(),
    prefix: text("prefix").notNull(),
    createdBy: text("created_by"),
    createdAt: createdAt(),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true }),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
  },
  (t) => [uniqueIndex("agent_tokens_hash_idx").on(t.tokenHash), index("agent_tokens_org_idx").on(t.orgId)],
);

export const plans = pgTable("plans", {
  id: text("id").primaryKey(),
  orgId: text("org_id")
    .notNull()
    .references(() => orgs.id),
  name: text("name").notNull(),
  document: jsonb("document").$type<Plan>().notNull(),
  /** The latest version's YAML exactly as its author wrote it (comments, key order, no defaults); null when saved as JSON only. */
  source: text("source"),
  /** The plan's target credentials, sealed (plan-secrets-box.ts); `document` and `source` hold them redacted. */
  secrets: text("secrets"),
  /** The latest version number; every create/update also writes a plan_versions row. */
  version: integer("version").notNull().default(1),
  tags: text("tags").array().notNull().default(sql`'{}'::text[]`),
  notes: text("notes").notNull().default(""),
  /** The run the plan's later runs are judged against (compare deltas, trend regressions); unset when that run is deleted. */
  baselineRunId: text("baseline_run_id").references((): AnyPgColumn => runs.id, { onDelete: "set null" }),
  createdAt: createdAt(),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});

/** Every saved version of a plan (1, 2, …), so a plan's history and the runs of older versions stay explainable. */
export const planVersions = pgTable(
  "plan_versions",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    planId: text("plan_id")
      .notNull()
      .references(() => plans.id, { onDelete: "cascade" }),
    version: integer("version").notNull(),
    name: text("name").notNull(),
    document: jsonb("document").$type<Plan>().notNull(),
    /** This version's YAML as written (null: saved as JSON, or before sources were kept); `document` is what runs. */
    source: text("source"),
    /** This version's target credentials, sealed (plan-secrets-box.ts). */
    secrets: text("secrets"),
    createdBy: text("created_by"),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("plan_versions_plan_version_idx").on(t.planId, t.version)],
);

export const runs = pgTable(
  "runs",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id),
    planId: text("plan_id").references(() => plans.id, { onDelete: "set null" }),
    name: text("name").notNull(),
    plan: jsonb("plan").$type<Plan>().notNull(),
    /** The plan's target credentials, sealed (plan-secrets-box.ts); `plan` holds them redacted. */
    secrets: text("secrets"),
    status: text("status").$type<RunStatus>().notNull(),
    reason: text("reason"),
    summary: jsonb("summary").$type<RunSummary>(),
    /** Spread between the earliest and latest shard start, ms, as reported by the agents. */
    startSkewMs: doublePrecision("start_skew_ms"),
    /** The worst agent's actual start minus the planned start instant, ms (its offset-corrected clock); null when none reported. */
    startLateMs: doublePrecision("start_late_ms"),
    tags: text("tags").array().notNull().default(sql`'{}'::text[]`),
    notes: text("notes").notNull().default(""),
    /** The plan schedule that started the run (null: started by a person or CI). */
    scheduleId: text("schedule_id"),
    /** The saved plan's version the run ran (plans.version when it was queued); null for a plan sent inline. */
    planVersion: integer("plan_version"),
    /** Live rate changes made while it ran (the run page's rate control, POST /api/v1/runs/{id}/rate), in order. */
    rateChanges: jsonb("rate_changes").$type<RateChange[]>().notNull().default([]),
    createdAt: createdAt(),
    startedAt: timestamp("started_at", { withTimezone: true }),
    endedAt: timestamp("ended_at", { withTimezone: true }),
  },
  (t) => [index("runs_org_created_idx").on(t.orgId, t.createdAt), index("runs_tags_idx").using("gin", t.tags)],
);

/**
 * Read-only links to a run for the members of its org (any role, viewers included): the link
 * opens the run whatever org the member has active, and never without a session of a member of
 * `orgId`. Revoked links stay (audit) and open nothing.
 */
export const runShares = pgTable(
  "run_shares",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id, { onDelete: "cascade" }),
    runId: text("run_id")
      .notNull()
      .references(() => runs.id, { onDelete: "cascade" }),
    createdBy: text("created_by"),
    createdAt: createdAt(),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
  },
  (t) => [index("run_shares_run_idx").on(t.runId)],
);

/**
 * A plan's cron schedule (one per plan). The row is the truth; web mirrors it into a BullMQ job
 * scheduler (id `plan-schedule:<planId>`) whose jobs a hub turns into runs, writing `last*` here.
 */
export const planSchedules = pgTable(
  "plan_schedules",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id, { onDelete: "cascade" }),
    planId: text("plan_id")
      .notNull()
      .references(() => plans.id, { onDelete: "cascade" }),
    cron: text("cron").notNull(),
    timezone: text("timezone").notNull().default("UTC"),
    enabled: boolean("enabled").notNull().default(true),
    createdBy: text("created_by"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    lastRunAt: timestamp("last_run_at", { withTimezone: true }),
    lastRunId: text("last_run_id"),
    /** Why the last firing started no run (target refused, plan deleted…); null when it started one. */
    lastError: text("last_error"),
  },
  (t) => [uniqueIndex("plan_schedules_plan_idx").on(t.planId), index("plan_schedules_org_idx").on(t.orgId)],
);

/** The shard lifecycle is contracts' (shard-lifecycle.ts). */
export type { ShardStatus };

export const shards = pgTable(
  "shards",
  {
    id: text("id").primaryKey(),
    runId: text("run_id")
      .notNull()
      .references(() => runs.id, { onDelete: "cascade" }),
    index: integer("index").notNull(),
    count: integer("count").notNull(),
    agentId: text("agent_id").references(() => agents.id, { onDelete: "set null" }),
    status: text("status").$type<ShardStatus>().notNull().default("pending"),
    plan: jsonb("plan").$type<Plan>().notNull(),
    /** The shard plan's target credentials, sealed (plan-secrets-box.ts); `plan` holds them redacted. */
    secrets: text("secrets"),
    error: text("error"),
    frames: integer("frames").notNull().default(0),
    startedAt: timestamp("started_at", { withTimezone: true }),
    endedAt: timestamp("ended_at", { withTimezone: true }),
  },
  (t) => [uniqueIndex("shards_run_index_idx").on(t.runId, t.index)],
);

/** One row per shard per 1 s interval: the frame as the agent sent it. (shard_id, seq) makes storage idempotent. */
export const runIntervals = pgTable(
  "run_intervals",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    runId: text("run_id")
      .notNull()
      .references(() => runs.id, { onDelete: "cascade" }),
    shardId: text("shard_id")
      .notNull()
      .references(() => shards.id, { onDelete: "cascade" }),
    agentId: text("agent_id").notNull(),
    seq: integer("seq").notNull(),
    index: integer("index").notNull(),
    /** Interval start, epoch ms on the hub clock. */
    startedAt: doublePrecision("started_at").notNull(),
    durationMs: doublePrecision("duration_ms").notNull(),
    warmup: boolean("warmup").notNull(),
    counters: jsonb("counters").$type<Record<string, number>>().notNull(),
    histograms: jsonb("histograms").$type<Record<string, string>>().notNull(),
    health: jsonb("health").$type<Health>().notNull(),
    /** Sending time within the interval (absent: all of it); send rates divide by it. */
    activeMs: doublePrecision("active_ms"),
    /** connections.stages: the stage the interval starts in. */
    stage: integer("stage"),
    /** sweep: the step whose hold the interval belongs to. */
    step: jsonb("step").$type<IntervalFrame["step"]>(),
    /** Flows: incoming messages that matched nothing, a few per event (the agent caps them per frame). */
    samples: jsonb("samples").$type<NonNullable<IntervalFrame["samples"]>>(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("run_intervals_shard_seq_idx").on(t.shardId, t.seq), index("run_intervals_run_index_idx").on(t.runId, t.index)],
);

/**
 * A run's merged timeline, one row per second with every agent's frame for it merged exactly: what
 * the run page, /intervals and the live feed read. The hub's run meter writes it as frames are
 * stored; raw frames (run_intervals) stay the source it can be rebuilt from.
 */
export const runPoints = pgTable(
  "run_points",
  {
    runId: text("run_id")
      .notNull()
      .references(() => runs.id, { onDelete: "cascade" }),
    index: integer("index").notNull(),
    point: jsonb("point").$type<IntervalPoint>().notNull(),
    /** The second's merged round-trip and delivery histograms (compressed base64), so seconds can be merged further exactly. */
    histograms: jsonb("histograms").$type<Record<string, string>>().notNull(),
    /** Raw frames merged into the row. */
    frames: integer("frames").notNull(),
  },
  (t) => [primaryKey({ columns: [t.runId, t.index] })],
);

/** The run meter's running result: the summary (live while the run runs, final after) and the analysis (spectra, per agent). */
export const runMeters = pgTable("run_meters", {
  runId: text("run_id")
    .primaryKey()
    .references(() => runs.id, { onDelete: "cascade" }),
  /** Raw frames folded in. */
  frames: integer("frames").notNull(),
  summary: jsonb("summary").$type<RunSummary>(),
  analysis: jsonb("analysis").$type<RunAnalysis>(),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  /** When retention deleted the run's raw frames; the merged rows and this row stay. */
  framesDeletedAt: timestamp("frames_deleted_at", { withTimezone: true }),
});

/**
 * An org's live run-metrics export (one Prometheus remote-write endpoint per org): the supervising
 * hub pushes each settled second of the org's runs there. `authorization` is sealed like webhook
 * secrets; the last push's outcome is kept for the settings page.
 */
export const metricsExports = pgTable("metrics_exports", {
  orgId: text("org_id")
    .primaryKey()
    .references(() => orgs.id, { onDelete: "cascade" }),
  kind: text("kind").$type<"prometheus-remote-write">().notNull().default("prometheus-remote-write"),
  url: text("url").notNull(),
  authorization: text("authorization"),
  labels: jsonb("labels").$type<Record<string, string>>().notNull().default({}),
  enabled: boolean("enabled").notNull().default(true),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  lastPushAt: timestamp("last_push_at", { withTimezone: true }),
  lastStatus: integer("last_status"),
  lastError: text("last_error"),
});

export const DEFAULT_ORG_ID = "org_default";
