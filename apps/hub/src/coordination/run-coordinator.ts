import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { abortRequestSchema, rateRequestSchema, REDIS_KEYS, type RateRequest, type ShardEndStatus } from "@volley/contracts";
import { deferred, errorMessage, sleep } from "../util/wait";

/**
 * Cross-replica run coordination. A run's shards may be held by other hub replicas (whichever has
 * the idle agent), so arming, the start instant, cancellation and shard ends go through Redis: a
 * hash per run is the source of truth, and a pub/sub channel wakes waiters at once (they also poll
 * the hash, so a missed message costs a second, never a hang).
 */
export const COORD_CHANNEL = "volley:hub:coord";
export const runStateKey = (runId: string) => `volley:run:${runId}:state`;
export const shardHeldKey = (shardId: string) => `volley:shard:${shardId}:held`;
/** Line wake-ups travel on the coordination channel under this pseudo run id (never a real one: ids are run_…). */
const lineTopic = (pool: string) => `line:${pool}`;
// Long enough for any run plus late readers; short enough that Redis does not keep every run forever.
const STATE_TTL_S = 2 * 86_400;

export interface ArmedShard {
  agentId: string;
  agentName: string;
  at: number;
}

export interface EndedShard {
  status: ShardEndStatus;
  error: string | null;
  /** Frames the agent reported sending; null when the agent was lost before saying. */
  frames: number | null;
  agentId: string | null;
  agentName: string | null;
  /** The agent was lost (gone past its reconnect grace, or its hub stopped holding the shard), as opposed to ending the shard itself. */
  lost?: boolean;
}

/** An agent's report of when its shard actually began (hub clock, as its offset-corrected clock saw it). */
export interface StartedShard {
  agentId: string;
  agentName: string;
  plannedAt: number;
  startedAt: number;
}

/** What a finalized run's summary and verdict were computed on (markFinalized). */
export interface JudgedRun {
  frames: number;
  /** The status is the thresholds' verdict (passed or failed by them), so more frames may change it. */
  byThresholds: boolean;
}
export const JUDGED_FIELD = "judged";

export interface RunState {
  armed: Map<string, ArmedShard>;
  started: Map<string, StartedShard>;
  ended: Map<string, EndedShard>;
  startAt: number | null;
  /** The run worker told every shard to stand down (arming timed out, a shard failed, deadline). */
  cancel: string | null;
  /** A user abort (web published on REDIS_KEYS.abort). */
  abort: string | null;
  finalized: string | null;
}

type CoordKind = "armed" | "started" | "ended" | "start" | "cancel" | "finalized" | "abort" | "line";
interface CoordMessage {
  kind: CoordKind;
  runId: string;
  reason?: string;
}

export class RunCoordinator {
  private readonly listeners = new Map<string, Set<(msg: CoordMessage) => void>>();
  private readonly abortHandlers: Array<(runId: string, reason: string) => void> = [];
  private readonly cancelHandlers: Array<(runId: string, reason: string) => void> = [];
  private readonly rateHandlers: Array<(change: RateRequest) => void> = [];
  private readonly parseCache = new Map<string, Map<string, { text: string; value: unknown }>>();

  constructor(
    private readonly redis: Redis,
    private readonly subscriber: Redis,
    private readonly log: Logger,
    /** How long a shard's hold mark outlives the last refresh of the hub holding it. */
    private readonly holdTtlMs = 15_000,
  ) {}

  async start(): Promise<void> {
    this.subscriber.on("message", (channel: string, text: string) => this.onMessage(channel, text));
    await this.subscriber.subscribe(COORD_CHANNEL, REDIS_KEYS.abort, REDIS_KEYS.rate);
  }

  /** Called for every live rate change web publishes, on every replica (each forwards it to its own agents). */
  onRate(handler: (change: RateRequest) => void): void {
    this.rateHandlers.push(handler);
  }

  /** Called for every abort request, on every replica (each forwards it to its own agents). */
  onAbort(handler: (runId: string, reason: string) => void): void {
    this.abortHandlers.push(handler);
  }

  onCancel(handler: (runId: string, reason: string) => void): void {
    this.cancelHandlers.push(handler);
  }

  private onMessage(channel: string, text: string): void {
    let msg: CoordMessage;
    try {
      if (channel === REDIS_KEYS.rate) {
        const change = rateRequestSchema.safeParse(JSON.parse(text));
        if (!change.success) throw new Error(change.error.issues.map((i) => `${i.path.join(".") || "message"}: ${i.message}`).join("; "));
        for (const h of this.rateHandlers) h(change.data);
        return;
      }
      if (channel === REDIS_KEYS.abort) {
        const abort = abortRequestSchema.safeParse(JSON.parse(text));
        if (!abort.success) throw new Error(abort.error.issues.map((i) => `${i.path.join(".") || "message"}: ${i.message}`).join("; "));
        msg = { kind: "abort", runId: abort.data.runId, reason: abort.data.reason };
      } else {
        const parsed = JSON.parse(text) as Partial<CoordMessage> & { reason?: unknown };
        if (typeof parsed.runId !== "string") throw new Error("runId missing");
        const reason = typeof parsed.reason === "string" && parsed.reason ? parsed.reason : undefined;
        msg = { kind: parsed.kind as CoordKind, runId: parsed.runId, reason };
      }
    } catch (err) {
      this.log.warn({ channel, err: errorMessage(err) }, "ignored a malformed coordination message");
      return;
    }
    if (msg.kind === "abort") {
      // Recorded in the hash so waiters (and a run worker that picks the run up later) see it too.
      this.redis
        .multi()
        .hset(runStateKey(msg.runId), "abort", msg.reason!)
        .expire(runStateKey(msg.runId), STATE_TTL_S)
        .exec()
        .catch((err) => this.log.error({ runId: msg.runId, err: errorMessage(err) }, "could not record abort"));
      for (const h of this.abortHandlers) h(msg.runId, msg.reason!);
    }
    if (msg.kind === "cancel") for (const h of this.cancelHandlers) h(msg.runId, msg.reason ?? "cancelled");
    // Every replica that read the run's state drops its parses once the run is finalized.
    if (msg.kind === "finalized") this.parseCache.delete(msg.runId);
    for (const l of this.listeners.get(msg.runId) ?? []) l(msg);
  }

  /** Local subscription to one run's coordination messages; returns the unsubscribe function. */
  onRun(runId: string, listener: (msg: CoordMessage) => void): () => void {
    let set = this.listeners.get(runId);
    if (!set) this.listeners.set(runId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(runId);
    };
  }

  private async write(runId: string, field: string, value: string, msg: CoordMessage): Promise<void> {
    const key = runStateKey(runId);
    await this.redis.multi().hset(key, field, value).expire(key, STATE_TTL_S).publish(COORD_CHANNEL, JSON.stringify(msg)).exec();
  }

  markArmed(runId: string, shardId: string, info: ArmedShard): Promise<void> {
    return this.write(runId, `armed:${shardId}`, JSON.stringify(info), { kind: "armed", runId });
  }

  markStarted(runId: string, shardId: string, started: StartedShard): Promise<void> {
    return this.write(runId, `started:${shardId}`, JSON.stringify(started), { kind: "started", runId });
  }

  markEnded(runId: string, shardId: string, ended: EndedShard): Promise<void> {
    return this.write(runId, `ended:${shardId}`, JSON.stringify(ended), { kind: "ended", runId });
  }

  publishStart(runId: string, startAt: number): Promise<void> {
    return this.write(runId, "start", String(startAt), { kind: "start", runId });
  }

  cancel(runId: string, reason: string): Promise<void> {
    return this.write(runId, "cancel", reason, { kind: "cancel", runId, reason });
  }

  /** Wakes the runs waiting in a pool's line (runs/agent-line.ts), on every replica: agents were freed or the head moved. */
  async wakeLine(pool: string): Promise<void> {
    await this.redis.publish(COORD_CHANNEL, JSON.stringify({ kind: "line", runId: lineTopic(pool) } satisfies CoordMessage));
  }

  onLine(pool: string, listener: () => void): () => void {
    return this.onRun(lineTopic(pool), listener);
  }

  /**
   * `judged`: what the verdict was computed on: the frames stored then, and whether the status came
   * from the summary's thresholds (passed/failed) rather than an abort or error that later frames
   * cannot change. The aggregator restates the run from it when more frames land (runs/run-restatement.ts).
   */
  async markFinalized(runId: string, status: string, judged?: JudgedRun): Promise<void> {
    if (judged) {
      const key = runStateKey(runId);
      await this.redis.multi().hset(key, JUDGED_FIELD, JSON.stringify(judged)).expire(key, STATE_TTL_S).exec();
    }
    await this.write(runId, "finalized", status, { kind: "finalized", runId });
    this.parseCache.delete(runId);
  }

  /**
   * Marks a shard as supervised by this hub until stop(), refreshing a mark that expires on its own:
   * a hub that dies stops refreshing, and a run's supervisor (on any replica) then learns that nobody
   * holds the shard (heldShards), even when its agent never comes back to tell.
   */
  holdShard(shardId: string): { stop(): void } {
    const key = shardHeldKey(shardId);
    const touch = () =>
      void this.redis
        .set(key, "1", "PX", this.holdTtlMs)
        .catch((err) => this.log.warn({ shardId, err: errorMessage(err) }, "could not refresh a shard's hold mark"));
    touch();
    const timer = setInterval(touch, Math.max(50, Math.floor(this.holdTtlMs / 3)));
    timer.unref();
    return {
      stop: () => {
        clearInterval(timer);
        void this.redis.del(key).catch((err) => this.log.warn({ shardId, err: errorMessage(err) }, "could not clear a shard's hold mark"));
      },
    };
  }

  /** The shards among `shardIds` some live hub holds (holdShard). */
  async heldShards(shardIds: readonly string[]): Promise<Set<string>> {
    if (shardIds.length === 0) return new Set();
    const values = await this.redis.mget(shardIds.map(shardHeldKey));
    return new Set(shardIds.filter((_, i) => values[i] !== null));
  }

  async getState(runId: string): Promise<RunState> {
    const raw = await this.redis.hgetall(runStateKey(runId));
    const state: RunState = { armed: new Map(), started: new Map(), ended: new Map(), startAt: null, cancel: null, abort: null, finalized: null };
    // A finalized run's state is read rarely (a late waiter, a restatement): parsed, not cached again.
    const cached = raw.finalized === undefined;
    const parse = <T>(field: string, value: string): T => (cached ? this.parsed(runId, field, value) : Object.freeze(JSON.parse(value))) as T;
    for (const [field, value] of Object.entries(raw)) {
      if (field.startsWith("armed:")) state.armed.set(field.slice(6), parse<ArmedShard>(field, value));
      else if (field.startsWith("started:")) state.started.set(field.slice(8), parse<StartedShard>(field, value));
      else if (field.startsWith("ended:")) state.ended.set(field.slice(6), parse<EndedShard>(field, value));
      else if (field === "start") state.startAt = Number(value);
      else if (field === "cancel") state.cancel = value;
      else if (field === "abort") state.abort = value;
      else if (field === "finalized") state.finalized = value;
    }
    return state;
  }

  /** How many runs' field parses are cached (at most 256; a finalized run's are dropped). */
  get cachedRuns(): number {
    return this.parseCache.size;
  }

  /**
   * A field's value parsed, reusing the last parse while the text is unchanged: a run's supervisor
   * and orphan watch read the whole hash every second or so, and with 100 shards that is 300 JSON
   * texts that almost never change. The cache holds the 256 runs read last.
   */
  private parsed(runId: string, field: string, value: string): unknown {
    let run = this.parseCache.get(runId);
    if (!run) {
      if (this.parseCache.size >= 256) this.parseCache.delete(this.parseCache.keys().next().value!);
      this.parseCache.set(runId, (run = new Map()));
    }
    const hit = run.get(field);
    if (hit && hit.text === value) return hit.value;
    // Frozen: the same object goes to every reader, so none may change it.
    const parsed: unknown = Object.freeze(JSON.parse(value));
    run.set(field, { text: value, value: parsed });
    return parsed;
  }

  /**
   * Re-evaluates `check` on the run's state whenever a coordination message for the run arrives
   * (and every `pollMs` regardless); returns its first defined result, or undefined once `timeoutMs`
   * has passed or `signal` fired.
   */
  async waitFor<T>(
    runId: string,
    check: (state: RunState) => T | undefined,
    opts: { timeoutMs: number; signal?: AbortSignal; pollMs?: number },
  ): Promise<T | undefined> {
    const deadline = Date.now() + opts.timeoutMs;
    let wake = deferred<void>();
    const off = this.onRun(runId, () => wake.resolve());
    const onAbort = () => wake.resolve();
    opts.signal?.addEventListener("abort", onAbort);
    try {
      for (;;) {
        const result = check(await this.getState(runId));
        if (result !== undefined) return result;
        const left = deadline - Date.now();
        if (left <= 0 || opts.signal?.aborted) return undefined;
        const nap = new AbortController();
        await Promise.race([wake.promise, sleep(Math.min(left, opts.pollMs ?? 1000), nap.signal)]);
        nap.abort(); // no stray timers left behind by a wait that woke early
        wake = deferred<void>();
      }
    } finally {
      off();
      opts.signal?.removeEventListener("abort", onAbort);
    }
  }
}
