import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { AGGREGATOR_GROUP, REDIS_KEYS, intervalFrameSchema, type IntervalFrame } from "@volley/contracts";
import { insertFrames, type Db } from "@volley/db";
import { runStateKey } from "../coordination/run-coordinator";
import { errorMessage, sleep } from "../util/wait";
import { SampleCap } from "./sample-cap";
import { streamDrained } from "./stream-backlog";

export interface AggregatorOptions {
  db: Db;
  /** Commands (SMEMBERS, XACK, XAUTOCLAIM, ...). */
  redis: Redis;
  /** A dedicated connection: XREADGROUP BLOCK holds it. */
  reader: Redis;
  consumer: string;
  log: Logger;
  onStored: (runId: string, stored: number) => void;
  blockMs?: number;
  batchSize?: number;
  /** Pending entries idle longer than this belong to a crashed hub and are claimed. */
  claimIdleMs?: number;
  /** How often to claim stale entries and retire finished runs. */
  maintenanceEveryMs?: number;
  /**
   * After a read that did not fill a batch, wait this long before the next, so a second's frames
   * (which agents send at the same instant) are stored in one insert rather than dozens.
   */
  gatherMs?: number;
  /**
   * Called for a finalized run once its stream is drained, before the aggregator lets it go
   * (restates a run whose late frames it was not judged on). A throw keeps the run for the next round.
   */
  beforeRetire?: (runId: string) => Promise<unknown>;
}

type StreamEntry = [id: string, fields: string[]];
const PG_FOREIGN_KEY_VIOLATION = "23503";

/**
 * Moves frames from the runs' Redis streams into PostgreSQL: one consumer per hub in the
 * AGGREGATOR_GROUP group, so replicas share the work. An entry is acknowledged only after its
 * insert has committed, and inserts are idempotent per (shard, seq), so a crash between the two
 * (or a frame an agent resent) stores the frame once.
 */
export class Aggregator {
  private readonly groups = new Set<string>();
  private readonly stopping = new AbortController();
  private loop: Promise<void> | null = null;
  private lastMaintenance = 0;
  /** A store failed: entries this consumer read are pending, and are retried before new ones. */
  private ownPending = false;
  private readonly sampleCap = new SampleCap();

  constructor(private readonly opts: AggregatorOptions) {}

  start(): void {
    this.loop = this.run();
  }

  /** Finishes the batch in hand (stored and acked), then stops. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.loop;
  }

  private async run(): Promise<void> {
    const signal = this.stopping.signal;
    while (!signal.aborted) {
      try {
        await this.pollOnce();
      } catch (err) {
        if (/NOGROUP/.test(errorMessage(err)))
          this.groups.clear(); // a stream expired under us: recreate groups
        else this.opts.log.error({ err: errorMessage(err) }, "aggregator iteration failed; retrying");
        await sleep(500, signal);
      }
    }
  }

  /** One iteration: maintenance when due, then one blocking read of every active run's stream. */
  async pollOnce(): Promise<void> {
    const { redis, reader, consumer } = this.opts;
    const runIds = await redis.smembers(REDIS_KEYS.activeRuns);
    if (runIds.length === 0) {
      await sleep(this.opts.blockMs ?? 1000, this.stopping.signal);
      return;
    }
    await this.ensureGroups(runIds);
    if (Date.now() - this.lastMaintenance >= (this.opts.maintenanceEveryMs ?? 5000)) {
      this.lastMaintenance = Date.now();
      await this.maintain(runIds);
    }
    const keys = runIds.map(REDIS_KEYS.frames);
    const runOf = new Map(runIds.map((id) => [REDIS_KEYS.frames(id), id]));
    if (this.ownPending) await this.retryOwnPending(keys, runOf);
    const res = (await reader.xreadgroup(
      "GROUP",
      AGGREGATOR_GROUP,
      consumer,
      "COUNT",
      this.opts.batchSize ?? 500,
      "BLOCK",
      this.opts.blockMs ?? 1000,
      "STREAMS",
      ...keys,
      ...keys.map(() => ">"),
    )) as Array<[key: string, entries: StreamEntry[]]> | null;
    let read = 0;
    for (const [key, entries] of res ?? []) {
      read += entries.length;
      await this.storeOrRetry(runOf.get(key)!, entries);
    }
    if (read > 0 && read < (this.opts.batchSize ?? 500)) await sleep(this.opts.gatherMs ?? 100, this.stopping.signal);
  }

  /**
   * Entries whose insert failed (the database was down) are retried as soon as it answers rather
   * than after XAUTOCLAIM's idle time: a run's finalizer is waiting for them. A stream whose entries
   * still fail does not hold up the others' (new entries are read next either way).
   */
  private async retryOwnPending(keys: string[], runOf: Map<string, string>): Promise<void> {
    const { reader, consumer, log } = this.opts;
    const batchSize = this.opts.batchSize ?? 500;
    const again = (await reader.xreadgroup("GROUP", AGGREGATOR_GROUP, consumer, "COUNT", batchSize, "STREAMS", ...keys, ...keys.map(() => "0"))) as Array<
      [key: string, entries: StreamEntry[]]
    > | null;
    // More than a batch left over, or a batch that fails again: retry on the next iteration.
    let failing = (again ?? []).some(([, entries]) => entries.length >= batchSize);
    for (const [key, entries] of again ?? []) {
      // Entries trimmed from the stream while pending come back without fields: nothing to store.
      const gone = entries.filter(([, fields]) => fields === null).map(([id]) => id);
      if (gone.length > 0) await this.opts.redis.xack(key, AGGREGATOR_GROUP, ...gone);
      const live = entries.filter(([, fields]) => fields !== null);
      if (live.length === 0) continue;
      try {
        await this.store(runOf.get(key)!, live);
      } catch (err) {
        failing = true;
        log.warn({ runId: runOf.get(key), entries: live.length, err: errorMessage(err) }, "frames still not stored; retrying");
      }
    }
    this.ownPending = failing;
  }

  private async storeOrRetry(runId: string, entries: StreamEntry[]): Promise<void> {
    try {
      await this.store(runId, entries);
    } catch (err) {
      this.ownPending = true;
      throw err;
    }
  }

  private async ensureGroups(runIds: string[]): Promise<void> {
    for (const runId of runIds) {
      const key = REDIS_KEYS.frames(runId);
      if (this.groups.has(key)) continue;
      try {
        await this.opts.redis.xgroup("CREATE", key, AGGREGATOR_GROUP, "0", "MKSTREAM");
      } catch (err) {
        if (!/BUSYGROUP/.test(errorMessage(err))) throw err;
      }
      this.groups.add(key);
    }
  }

  /** Stores a batch of one stream's entries, then acks them. Throws (no ack) if the database is down. */
  async store(runId: string, entries: StreamEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const { db, redis, log } = this.opts;
    const key = REDIS_KEYS.frames(runId);
    const frames = new Map<string, IntervalFrame>();
    for (const [id, fields] of entries) {
      const frame = parseEntry(fields);
      if (frame) frames.set(`${frame.shardId}:${frame.seq}`, frame);
      else log.warn({ stream: key, id }, "dropped a malformed stream entry");
    }
    const capped = this.sampleCap.apply(runId, [...frames.values()]);
    const batch = capped.frames;
    let stored = 0;
    try {
      try {
        stored = await insertFrames(db, batch);
      } catch (err) {
        if (pgCode(err) !== PG_FOREIGN_KEY_VIOLATION) throw err;
        // Some frame names a run or shard that does not exist; store the others one by one.
        stored = await this.storeOneByOne(batch);
      }
    } catch (err) {
      capped.undo(); // the same frames come back, and their samples with them
      throw err;
    }
    await redis.xack(key, AGGREGATOR_GROUP, ...entries.map(([id]) => id));
    if (stored > 0) this.opts.onStored(runId, stored);
  }

  private async storeOneByOne(batch: IntervalFrame[]): Promise<number> {
    let stored = 0;
    for (const frame of batch) {
      try {
        stored += await insertFrames(this.opts.db, [frame]);
      } catch (err) {
        if (pgCode(err) !== PG_FOREIGN_KEY_VIOLATION) throw err;
        this.opts.log.warn({ runId: frame.runId, shardId: frame.shardId, seq: frame.seq }, "dropped a frame for an unknown run or shard");
      }
    }
    return stored;
  }

  /** Claims entries a crashed hub read but never acked, and retires runs that are finalized and drained. */
  private async maintain(runIds: string[]): Promise<void> {
    const { redis, consumer, log } = this.opts;
    for (const runId of runIds) {
      const key = REDIS_KEYS.frames(runId);
      let cursor = "0-0";
      for (let round = 0; round < 20; round++) {
        const [next, entries] = (await redis.xautoclaim(
          key,
          AGGREGATOR_GROUP,
          consumer,
          this.opts.claimIdleMs ?? 30_000,
          cursor,
          "COUNT",
          this.opts.batchSize ?? 500,
        )) as [string, StreamEntry[]];
        if (entries.length > 0) {
          log.info({ runId, entries: entries.length }, "claimed stale frame entries");
          await this.store(
            runId,
            entries.filter(([, fields]) => fields !== null),
          );
        }
        if (next === "0-0") break;
        cursor = next;
      }
      const finalized = await redis.hget(runStateKey(runId), "finalized");
      if (finalized && (await streamDrained(redis, runId))) {
        try {
          await this.opts.beforeRetire?.(runId);
        } catch (err) {
          log.warn({ runId, err: errorMessage(err) }, "could not restate a finalized run; retrying at the next maintenance");
          continue;
        }
        await redis.srem(REDIS_KEYS.activeRuns, runId);
        // Kept an hour for late readers, then Redis frees it; PostgreSQL has every frame.
        await redis.expire(key, 3600);
        this.groups.delete(key);
        this.sampleCap.forget(runId);
        log.debug({ runId }, "run retired from the aggregator");
      }
    }
  }
}

function parseEntry(fields: string[]): IntervalFrame | null {
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] !== "f") continue;
    try {
      const parsed = intervalFrameSchema.safeParse(JSON.parse(fields[i + 1]!));
      return parsed.success ? parsed.data : null;
    } catch {
      return null;
    }
  }
  return null;
}

/** drizzle wraps driver errors; the PostgreSQL SQLSTATE is on the error or its cause. */
function pgCode(err: unknown): string | undefined {
  const e = err as { code?: unknown; cause?: { code?: unknown } };
  const code = e?.cause?.code ?? e?.code;
  return typeof code === "string" ? code : undefined;
}
