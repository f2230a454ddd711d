import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { AGGREGATOR_GROUP, REDIS_KEYS, intervalFrameSchema, type IntervalFrame } from "@volley/contracts";
import { insertFrames, type Db } from "@volley/db";
import { runStateKey } from "../coordination/run-coordinator";
import { errorMessage, sleep } from "../util/wait";
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
        if (/NOGROUP/.test(errorMessage(err))) this.groups.clear(); // a stream expired under us: recreate groups
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
    const res = (await reader.xreadgroup(
      "GROUP", AGGREGATOR_GROUP, consumer,
      "COUNT", this.opts.batchSize ?? 500,
      "BLOCK", this.opts.blockMs ?? 1000,
      "STREAMS", ...keys, ...keys.map(() => ">"),
    )) as Array<[key: string, entries: StreamEntry[]]> | null;
    const runOf = new Map(runIds.map((id) => [REDIS_KEYS.frames(id), id]));
    let read = 0;
    for (const [key, entries] of res ?? []) {
      read += entries.length;
      await this.store(runOf.get(key)!, entries);
    }
    if (read > 0 && read < (this.opts.batchSize ?? 500)) await sleep(this.opts.gatherMs ?? 100, this.stopping.signal);
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
    const batch = [...frames.values()];
    let stored = 0;
    try {
      stored = await insertFrames(db, batch);
    } catch (err) {
      if (pgCode(err) !== PG_FOREIGN_KEY_VIOLATION) throw err;
      // Some frame names a run or shard that does not exist; store the others one by one.
      stored = await this.storeOneByOne(batch);
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
        const [next, entries] = (await redis.xautoclaim(key, AGGREGATOR_GROUP, consumer, this.opts.claimIdleMs ?? 30_000, cursor, "COUNT", this.opts.batchSize ?? 500)) as [string, StreamEntry[]];
        if (entries.length > 0) {
          log.info({ runId, entries: entries.length }, "claimed stale frame entries");
          await this.store(runId, entries.filter(([, fields]) => fields !== null));
        }
        if (next === "0-0") break;
        cursor = next;
      }
      const finalized = await redis.hget(runStateKey(runId), "finalized");
      if (finalized && (await streamDrained(redis, runId))) {
        await redis.srem(REDIS_KEYS.activeRuns, runId);
        // Kept an hour for late readers, then Redis frees it; PostgreSQL has every frame.
        await redis.expire(key, 3600);
        this.groups.delete(key);
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
