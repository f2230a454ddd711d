
import {
  bigserial,
  boolean,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import type { AgentCapacity, Health, Plan, RunStatus, RunSummary } from "@volley/contracts";

const createdAt = () => timestamp("created_at", { withTimezone: true }).notNull().defaultNow();

export const orgs = pgTable("orgs", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  createdAt: createdAt(),
});

export const agents = pgTable(
  "agents",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull().references(() => orgs.id),
    name: text("name").notNull(),
    pool: text("pool").notNull(),
    instanceId: text("instance_id").notNull(),
    version: text("version").notNull(),
    labels: jsonb("labels").$type<Record<string, string>>().notNull().default({}),
    capacity: jsonb("capacity").$type<AgentCapacity>().notNull(),
    /** The join token this agent enrolled with; revoking the token disconnects the agent. */
    tokenId: text("token_id").references(() => agentTokens.id, { onDelete: "set null" }),
    status: text("status").$type<"online" | "busy" | "offline">().notNull(),
    connectedAt: timestamp("connected_at", { withTimezone: true }),
    lastSeenAt: timestamp("last_seen_at", { withTimezone: true }),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("agents_instance_idx").on(t.instanceId), index("agents_org_pool_idx").on(t.orgId, t.pool)],
);

/**
 * Join tokens agents enroll with. Only the SHA-256 of the secret is stored; `prefix` (the first
 * characters of the secret) lets people tell tokens apart in lists. Revoked tokens stay for audit.
 */
export const agentTokens = pgTable(
  "agent_tokens",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull().references(() => orgs.id),
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
  orgId: text("org_id").notNull().references(() => orgs.id),
  name: text("name").notNull(),
  document: jsonb("document").$type<Plan>().notNull(),
  createdAt: createdAt(),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});

export const runs = pgTable(
  "runs",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull().references(() => orgs.id),
    planId: text("plan_id").references(() => plans.id, { onDelete: "set null" }),
    name: text("name").notNull(),
    plan: jsonb("plan").$type<Plan>().notNull(),
    status: text("status").$type<RunStatus>().notNull(),
    reason: text("reason"),
    summary: jsonb("summary").$type<RunSummary>(),
    /** Spread between the earliest and latest shard start, ms, as reported by the agents. */
    startSkewMs: doublePrecision("start_skew_ms"),
    createdAt: createdAt(),
    startedAt: timestamp("started_at", { withTimezone: true }),
    endedAt: timestamp("ended_at", { withTimezone: true }),
  },
  (t) => [index("runs_org_created_idx").on(t.orgId, t.createdAt)],
);

export type ShardStatus = "pending" | "assigned" | "running" | "completed" | "errored" | "aborted";

export const shards = pgTable(
  "shards",
  {
    id: text("id").primaryKey(),
    runId: text("run_id").notNull().references(() => runs.id, { onDelete: "cascade" }),
    index: integer("index").notNull(),
    count: integer("count").notNull(),
    agentId: text("agent_id").references(() => agents.id, { onDelete: "set null" }),
    status: text("status").$type<ShardStatus>().notNull().default("pending"),
    plan: jsonb("plan").$type<Plan>().notNull(),
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
    runId: text("run_id").notNull().references(() => runs.id, { onDelete: "cascade" }),
    shardId: text("shard_id").notNull().references(() => shards.id, { onDelete: "cascade" }),
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
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("run_intervals_shard_seq_idx").on(t.shardId, t.seq), index("run_intervals_run_index_idx").on(t.runId, t.index)],
);

export const DEFAULT_ORG_ID = "org_default";
