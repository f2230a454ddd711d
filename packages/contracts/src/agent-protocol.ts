import { z } from "zod";
import { healthSchema, intervalFrameSchema } from "./frame";
import { shardJobSchema } from "./jobs";
import { poolNameSchema } from "./plan";
import { shardEndStatusSchema } from "./shard-lifecycle";

/**
 * The agent gateway: a Socket.IO namespace on the hub. Agents connect out; every message below is
 * validated on receipt by both sides. Requests that need an answer use Socket.IO acks.
 */
export const AGENT_NAMESPACE = "/agent";

export const agentCapacitySchema = z.object({
  cores: z.number().int().positive(),
  memoryMb: z.number().int().positive(),
  maxConnections: z.number().int().positive(),
  sourceAddresses: z.array(z.string()).default([]),
});
export type AgentCapacity = z.infer<typeof agentCapacitySchema>;

/** A shard an agent holds: armed (assigned, waiting for its start), running, or ending (frames and shard.end in flight). */
export const heldShardSchema = z.object({ runId: z.string().min(1), shardId: z.string().min(1), state: z.enum(["armed", "running", "ending"]) });

/** Sent as the Socket.IO handshake `auth` payload. */
export const agentHelloSchema = z.object({
  token: z.string().min(1),
  /** Stable across reconnects of one agent process, so the hub can resume its shard. */
  instanceId: z.string().min(1),
  /**
   * Stable across restarts of one agent (kept in its state file): the hub gives a restarted agent
   * its row back instead of adding one. Absent (older agents): one row per process.
   */
  agentKey: z.string().min(8).max(200).optional(),
  name: z.string().min(1).max(200),
  version: z.string(),
  /** A join token's pool replaces it; still validated, so no hello carries a name a plan could not. */
  pool: poolNameSchema.default("default"),
  labels: z.record(z.string(), z.string()).default({}),
  capacity: agentCapacitySchema,
  /**
   * The shard this process holds as it (re)connects. A hub with no session for it (the hub that
   * assigned the shard restarted) adopts the shard from this instead of refusing its shard.end.
   */
  shard: heldShardSchema.optional(),
});
export type AgentHello = z.infer<typeof agentHelloSchema>;
export type HeldShard = z.infer<typeof heldShardSchema>;

export const ackSchema = z.union([
  z.object({ ok: z.literal(true) }),
  z.object({
    ok: z.literal(false),
    error: z.string(),
    /**
     * The hub will refuse this message whatever happens (not the agent's shard, malformed): the agent
     * drops it at once instead of retrying, which kept an agent "busy" for minutes after its lease
     * ended. Absent: the refusal may pass (the hub could not store it now), so it is sent again.
     */
    permanent: z.boolean().optional(),
  }),
]);
export type Ack = z.infer<typeof ackSchema>;

/**
 * What the hub's install allows load to reach. Hosted (a public SaaS): agents refuse to connect to
 * any address that is not public (private, loopback, link-local …), checked when the name resolves
 * for each connection — web checked the target when the run was queued, but a name can be
 * re-pointed since. Absent (older hubs): self-hosted.
 */
export const targetPolicySchema = z.object({ mode: z.enum(["hosted", "self-hosted"]) });
export type TargetPolicy = z.infer<typeof targetPolicySchema>;

export const welcomeSchema = z.object({ agentId: z.string(), targetPolicy: targetPolicySchema.optional() });
export type Welcome = z.infer<typeof welcomeSchema>;

/** agent → hub, acked with the hub's clock: NTP-style offset estimate (keep the min-RTT sample). */
export const clockPingAckSchema = z.object({ hubTime: z.number() });

/** hub → agent: prepare the shard; the ack says it is armed (or why not). */
export const shardAssignSchema = shardJobSchema;
export type ShardAssign = z.infer<typeof shardAssignSchema>;

/** hub → agent: start at this hub-clock epoch ms. */
export const shardStartSchema = z.object({ shardId: z.string(), startAt: z.number() });
export type ShardStart = z.infer<typeof shardStartSchema>;

export const shardAbortSchema = z.object({ shardId: z.string(), reason: z.string() });
export type ShardAbort = z.infer<typeof shardAbortSchema>;

/** agent → hub, acked once the frame is durably in the run's Redis stream. */
export const frameMessageSchema = intervalFrameSchema;

/** agent → hub, after the last frame of the shard has been acknowledged. */
export const shardEndSchema = z.object({
  runId: z.string(),
  shardId: z.string(),
  status: shardEndStatusSchema,
  error: z.string().optional(),
  frames: z.number().int().nonnegative(),
});
export type ShardEnd = z.infer<typeof shardEndSchema>;

/**
 * agent → hub every few seconds. `shard` is the shard the agent holds (absent: none; agents before
 * it was added never send it): the hub reconciles it with its own lease, telling the agent to drop a
 * shard no hub supervises and freeing an agent it wrongly thinks busy, so no agent stays wedged.
 */
export const heartbeatSchema = z.object({ busy: z.boolean(), health: healthSchema, shard: heldShardSchema.optional() });
export type Heartbeat = z.infer<typeof heartbeatSchema>;

/** Event names, both directions. */
export const AGENT_EVENTS = {
  welcome: "welcome",
  clockPing: "clock.ping",
  shardAssign: "shard.assign",
  shardStart: "shard.start",
  shardAbort: "shard.abort",
  shardRate: "shard.rate",
  frame: "frame",
  shardEnd: "shard.end",
  heartbeat: "heartbeat",
} as const;

/** Redis keys shared by web and hub. */
export const REDIS_KEYS = {
  /** Stream of IntervalFrame JSON (field `f`) per run, read by the aggregator's consumer group. */
  frames: (runId: string) => `volley:run:${runId}:frames`,
  /** Set of run ids whose frame streams the aggregator reads. */
  activeRuns: "volley:runs:active",
  /** Pub/sub channel web publishes abort requests on (abortRequestSchema as JSON). */
  abort: "volley:abort",
  /** Pub/sub channel web publishes live rate changes on (rateRequestSchema as JSON). */
  rate: "volley:rate",
} as const;

/** An abort request on REDIS_KEYS.abort: web asks every hub replica to stop a run (hubs re-publish their own). */
export const abortRequestSchema = z.object({
  runId: z.string().min(1),
  /** Why, as the run's reason will say it. */
  reason: z.string().min(1).max(500).default("aborted"),
});
export type AbortRequest = z.infer<typeof abortRequestSchema>;
export const AGGREGATOR_GROUP = "aggregator";

/**
 * The oldest agent this hub's protocol accepts. Raise it with a change agents before it cannot
 * speak; such an agent is refused in words that say how to upgrade (re-run the install line).
 */
export const MIN_AGENT_VERSION = "0.1.0";

const versionParts = (v: string) => (/^(\d+)\.(\d+)\.(\d+)/.exec(v) ?? []).slice(1).map(Number);

/** Why an agent of `version` is refused, or null when the hub accepts it. */
export function agentVersionRefusal(version: string, min: string = MIN_AGENT_VERSION): string | null {
  const have = versionParts(version);
  const need = versionParts(min);
  const first = have.findIndex((n, i) => n !== need[i]);
  const older = have.length !== 3 || (first >= 0 && have[first]! < need[first]!);
  if (!older) return null;
  return `agent version ${version || "(none)"} is older than this hub accepts (${min} or newer): upgrade it by running the install line from Agents → Add agent again (it upgrades in place)`;
}
