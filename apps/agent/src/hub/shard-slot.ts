import type { Logger } from "pino";
import {
  AGENT_EVENTS,
  describeIssues,
  fieldIssues,
  frameMessageSchema,
  shardAbortSchema,
  shardAssignSchema,
  shardRateSchema,
  shardStartSchema,
  type Ack,
  type HeldShard,
  type IntervalFrame,
  type Plan,
  type ShardEnd,
  type ShardJob,
} from "@volley/contracts";
import { RateFeed } from "../engine/rate-feed";
import { shardPreflight, type AgentLimits } from "../engine/shard-preflight";
import type { Clock } from "../engine/clock";
import type { EngineFrame, RunShardOptions, ShardOutcome } from "../engine/types";
import type { ReliableOutbox } from "./reliable-outbox";

/** A start instant this far in the past is not honoured (the run would open with a burst to catch up). */
const LATE_START_LIMIT_MS = 1000;

/**
 * An armed shard with no start after this long is dropped, so an agent whose start (or abort) was
 * lost never stays "busy" for good. Longer than the hub waits for a start after arming (its arm
 * timeout, 30 s by default, plus 10 s), so the hub always gives up first.
 */
export const ARMED_LIMIT_MS = 90_000;

type SlotState =
  | { kind: "idle" }
  | { kind: "armed"; job: ShardJob; expiry: NodeJS.Timeout; rate: RateFeed }
  | { kind: "running"; job: ShardJob; controller: AbortController; rate: RateFeed; done: Promise<void> }
  /** The engine has ended; its frames and shard.end are still being delivered. */
  | { kind: "ending"; job: ShardJob };

export interface ShardSlotDeps {
  outbox: ReliableOutbox;
  log: Logger;
  limits: AgentLimits;
  clock: () => Clock;
  agentId: () => string;
  /** The hello's capacity.sourceAddresses: what every shard's connections bind, round-robin. */
  sourceAddresses?: readonly string[];
  /** Hosted hub (welcome.targetPolicy): shards refuse non-public target addresses. */
  publicOnly?: () => boolean;
  /** Runs a shard: the agent's engine worker threads (EngineWorkers.run), or runShard on this thread when absent. */
  engine?: (plan: Plan, opts: RunShardOptions) => Promise<ShardOutcome>;
}

const fail = (error: string): Ack => ({ ok: false, error });
const OK: Ack = { ok: true };

/**
 * The agent's single shard: idle → armed (assign) → running (start) → ending (frames and
 * shard.end in flight) → idle once the hub has acked shard.end. One shard at a time.
 */
export class ShardSlot {
  private state: SlotState = { kind: "idle" };
  private lastEnded: string | undefined;

  constructor(private readonly deps: ShardSlotDeps) {}

  get busy(): boolean {
    return this.state.kind !== "idle";
  }

  get shardId(): string | undefined {
    return this.state.kind === "idle" ? undefined : this.state.job.shardId;
  }

  /** The shard armed now and waiting for its start, if one is. */
  armedJob(): ShardJob | undefined {
    return this.state.kind === "armed" ? this.state.job : undefined;
  }

  /** What the hello tells a hub on (re)connect, so a restarted hub can adopt the shard. */
  held(): HeldShard | undefined {
    const s = this.state;
    return s.kind === "idle" ? undefined : { runId: s.job.runId, shardId: s.job.shardId, state: s.kind };
  }

  assign(payload: unknown): Ack {
    const parsed = shardAssignSchema.safeParse(payload);
    if (!parsed.success) return fail(`invalid shard: ${describeIssues(fieldIssues(parsed.error))}`);
    const job = parsed.data;
    // The hub may re-send an assignment after a reconnect; the same shard is already ours.
    if (this.state.kind !== "idle" && this.state.job.shardId === job.shardId) return OK;
    if (this.state.kind !== "idle") return fail(`busy with shard ${this.state.job.shardId}`);
    const unfit = shardPreflight(job.plan, this.deps.limits);
    if (unfit) return fail(unfit);
    const expiry = setTimeout(() => {
      if (this.state.kind !== "armed" || this.state.job.shardId !== job.shardId) return;
      this.deps.log.warn({ shardId: job.shardId }, `armed shard ${job.shardId} got no start within ${ARMED_LIMIT_MS / 1000} s; dropping it`);
      this.deliverEnd(job, { status: "aborted", error: `no start within ${ARMED_LIMIT_MS / 1000} s of arming`, frames: 0 });
    }, ARMED_LIMIT_MS);
    expiry.unref();
    this.state = { kind: "armed", job, expiry, rate: new RateFeed() };
    this.deps.log.info(
      { runId: job.runId, shardId: job.shardId },
      `shard ${job.shardId} armed: ${job.plan.connections.count} connections to ${job.plan.target.url}`,
    );
    return OK;
  }

  start(payload: unknown): Ack {
    const parsed = shardStartSchema.safeParse(payload);
    if (!parsed.success) return fail(`invalid start: ${describeIssues(fieldIssues(parsed.error))}`);
    const { shardId } = parsed.data;
    const state = this.state;
    if (state.kind !== "idle" && state.kind !== "armed" && state.job.shardId === shardId) return OK; // repeated start
    if (state.kind !== "armed" || state.job.shardId !== shardId) return fail(`shard ${shardId} is not armed on this agent`);

    const clock = this.deps.clock();
    let startAt = parsed.data.startAt;
    const lateMs = clock.hubNowMs() - startAt;
    if (lateMs > LATE_START_LIMIT_MS) {
      this.deps.log.warn({ shardId, lateMs: Math.round(lateMs) }, "start instant already passed; starting now");
      startAt = clock.hubNowMs();
    }
    clearTimeout(state.expiry);
    const controller = new AbortController();
    const { job, rate } = state;
    const done = this.execute(job, { planned: parsed.data.startAt, startAt }, clock, controller.signal, rate);
    this.state = { kind: "running", job, controller, rate, done };
    return OK;
  }

  /** A live rate change for the running shard (the run page's rate control); the engine applies it at its instant. */
  rate(payload: unknown): Ack {
    const parsed = shardRateSchema.safeParse(payload);
    if (!parsed.success) return fail(`invalid rate change: ${describeIssues(fieldIssues(parsed.error))}`);
    const { shardId, scale, at, what } = parsed.data;
    const state = this.state;
    if ((state.kind !== "running" && state.kind !== "armed") || state.job.shardId !== shardId) return fail(`shard ${shardId} is not running on this agent`);
    this.deps.log.info({ shardId, scale, inMs: Math.round(at - this.deps.clock().hubNowMs()) }, `shard ${shardId}: ${what} × ${scale}`);
    state.rate.push({ scale, at, what });
    return OK;
  }

  abort(payload: unknown): Ack {
    const parsed = shardAbortSchema.safeParse(payload);
    if (!parsed.success) return fail(`invalid abort: ${describeIssues(fieldIssues(parsed.error))}`);
    const { shardId, reason } = parsed.data;
    const state = this.state;
    if (state.kind === "idle" || state.job.shardId !== shardId) {
      return shardId === this.lastEnded ? OK : fail(`shard ${shardId} is not on this agent`);
    }
    if (state.kind === "armed") {
      this.deps.log.info({ shardId, reason }, "armed shard aborted before its start");
      this.deliverEnd(state.job, { status: "aborted", error: reason, frames: 0 });
    } else if (state.kind === "running") {
      this.deps.log.info({ shardId, reason }, "aborting shard");
      state.controller.abort(reason);
    }
    return OK;
  }

  /** Aborts whatever runs (shutdown) and resolves once its end is queued for delivery. */
  async abortCurrent(reason: string): Promise<void> {
    const state = this.state;
    if (state.kind === "armed") this.deliverEnd(state.job, { status: "aborted", error: reason, frames: 0 });
    if (state.kind === "running") {
      state.controller.abort(reason);
      await state.done;
    }
  }

  private async execute(
    job: ShardJob,
    { planned, startAt }: { planned: number; startAt: number },
    clock: Clock,
    signal: AbortSignal,
    rate: RateFeed,
  ): Promise<void> {
    const { log } = this.deps;
    let seq = 0;
    // The measured start rides on the next frame (the first), so it shares the frames' reliable, ordered spool.
    let start: IntervalFrame["start"];
    const onStart = (startedAt: number) => void (start = { plannedAt: planned, startedAt });
    const onFrame = (body: EngineFrame) => {
      const frame: IntervalFrame = { runId: job.runId, shardId: job.shardId, agentId: this.deps.agentId(), seq: seq++, ...body, ...(start ? { start } : {}) };
      start = undefined;
      const checked = frameMessageSchema.safeParse(frame);
      if (!checked.success) log.error({ issues: describeIssues(fieldIssues(checked.error)) }, "frame does not match the contract");
      this.deps.outbox.push(AGENT_EVENTS.frame, frame);
    };
    log.info({ shardId: job.shardId, inMs: Math.round(startAt - clock.hubNowMs()) }, `shard ${job.shardId} starting`);
    let ended: Pick<ShardOutcome, "status" | "error">;
    try {
      // The engine's code loads on first use: an agent with engine threads never runs it on this thread.
      const engine = this.deps.engine ?? (await import("../engine/run-shard")).runShard;
      const outcome = await engine(job.plan, {
        startAt,
        clock,
        onFrame,
        onStart,
        signal,
        rate,
        shard: job.shardId,
        sourceAddresses: this.deps.sourceAddresses,
        publicOnly: this.deps.publicOnly?.() ?? false,
      });
      log.info(
        { shardId: job.shardId, error: outcome.error, sweepStopped: outcome.sweepStopped, totals: outcome.totals },
        `shard ${job.shardId} ${outcome.status}`,
      );
      ended = outcome;
    } catch (err) {
      // runShard is not meant to throw; if it does, the hub must still hear how the shard ended.
      ended = { status: "errored", error: `agent failure: ${(err as Error).message}` };
      log.error({ shardId: job.shardId, err }, `shard ${job.shardId} failed inside the agent`);
    }
    this.deliverEnd(job, { status: ended.status, error: ended.error, frames: seq });
  }

  /** shard.end goes through the outbox behind the shard's frames, so the hub gets it only after every frame. */
  private deliverEnd(job: ShardJob, end: Pick<ShardEnd, "status" | "error" | "frames">): void {
    if (this.state.kind === "armed") clearTimeout(this.state.expiry);
    const message: ShardEnd = { runId: job.runId, shardId: job.shardId, status: end.status, frames: end.frames, ...(end.error ? { error: end.error } : {}) };
    this.state = { kind: "ending", job };
    const settle = () => {
      if (this.state.kind === "ending" && this.state.job.shardId === job.shardId) this.state = { kind: "idle" };
      this.lastEnded = job.shardId;
    };
    this.deps.outbox.push(AGENT_EVENTS.shardEnd, message, { onAcked: settle, onDropped: settle });
  }
}
