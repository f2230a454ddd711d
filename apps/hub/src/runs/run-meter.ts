import type { Logger } from "pino";
import type { IntervalPoint, Plan, RunSummary } from "@volley/contracts";
import {
  countFramesByShard,
  lastFrameIndex,
  listFrameKeys,
  listFrameKeysAfter,
  listFramesAfter,
  listFramesAtIndexes,
  listFramesBetween,
  listFramesById,
  maxFrameId,
  saveRunMeter,
  upsertRunPoints,
  type Db,
  type IntervalRow,
} from "@volley/db";
import { IndexBits, IntervalMerger, RunTally } from "@volley/metrics";

export interface RunMeterOptions {
  db: Db;
  runId: string;
  /** The plan's thresholds and sweep judge the summary; null for a run that never got one. */
  plan: Plan | null;
  log: Logger;
  /** Merged points of the seconds a poll touched (the live feed). */
  onPoints?: (runId: string, points: IntervalPoint[]) => void;
  /** How often the analysis (spectra, per agent: the costly part) is rewritten while the run runs (default 10 s). */
  analysisEveryMs?: number;
  /** How often the running summary is rewritten at most (default 1 s): a poll after each stored batch must not recompute it each time. */
  summaryEveryMs?: number;
}

/** Seconds kept merged in memory behind the newest; a frame for an older second re-merges it from its stored frames. */
const WINDOW = 15;
const PAGE = 5000;
/** Seconds a replay reads at once: memory stays bounded whatever the run's length. */
const REPLAY_SLICE = 60;

/**
 * The one per-run meter, on the hub that supervises the run: it takes each stored frame once
 * (whichever replica's aggregator stored it), folds it into the run's tally (summary, sweep steps,
 * spectra, per agent) and into its second's merged point, writes the touched seconds to run_points
 * and the running summary to run_meters, and hands the points to the live feed. Threshold checks
 * and finalization read the same state. Memory is the tally (bounded by agents, steps, histogram
 * names) plus WINDOW seconds of merged points, never the frames. A hub that takes the run over
 * rebuilds it by replaying the stored frames (`RunMeter.replay`).
 */
export class RunMeter {
  readonly tally = new RunTally();
  /** Per shard, the seqs folded: a frame is taken once, whatever order or how often it is read. */
  private readonly seen = new Map<string, IndexBits>();
  private readonly window = new Map<number, IntervalMerger>();
  /** Seconds that have a merged row (in memory or only stored). */
  private readonly merged = new IndexBits();
  private newest = -1;
  private lastId = 0;
  /**
   * Every frame stored with an id up to this is folded: reconcile checked it after every insert that
   * could still have held such an id had ended. A running reconcile reads only the frames above it.
   */
  private settledId = 0;
  /** The next watermark: the newest id a reconcile read, and (from the reconcile after it) the xmax every transaction must be past first. */
  private candidate: { id: number; xmax: bigint | null } | null = null;
  private lastAnalysisAt = 0;
  private lastSaveAt = 0;
  /** Frames folded since the summary was last written. */
  private unsaved = false;
  private busy: Promise<number> | null = null;
  private again = false;
  private wake: (() => void) | null = null;

  constructor(private readonly opts: RunMeterOptions) {}

  /** Frames folded so far. */
  get frames(): number {
    return this.tally.frames;
  }

  /**
   * A meter rebuilt from everything stored for the run (a hub taking the run over, a restatement):
   * frames replayed a slice of seconds at a time, each second merged from scratch and written.
   */
  static async replay(opts: RunMeterOptions): Promise<RunMeter> {
    const meter = new RunMeter(opts);
    await meter.replayStored();
    return meter;
  }

  private async replayStored(): Promise<void> {
    const { db, runId } = this.opts;
    // Frames stored while the replay reads are folded by the next poll (from this id), or found by reconcile().
    const startId = await maxFrameId(db, runId);
    const last = await lastFrameIndex(db, runId);
    for (let from = 0; from <= last; from += REPLAY_SLICE) {
      const rows = await listFramesBetween(db, runId, from, from + REPLAY_SLICE);
      const touched = new Set<number>();
      for (const row of rows) {
        const m = this.window.get(row.index) ?? new IntervalMerger(row.index);
        if (!this.take(row, m)) continue;
        touched.add(row.index);
        this.window.set(row.index, m);
        m.add(row, true);
        this.merged.add(row.index);
        this.newest = Math.max(this.newest, row.index);
      }
      await this.writePoints(touched);
      this.evict();
    }
    this.lastId = startId;
    await this.save(true);
  }

  /** Marks a frame folded; false when it already was. `into`: its second's merge, which gets the histograms decoded for the tally. */
  private take(row: IntervalRow, into?: IntervalMerger): boolean {
    let bits = this.seen.get(row.shardId);
    if (!bits) this.seen.set(row.shardId, (bits = new IndexBits()));
    if (!bits.add(row.seq)) return false;
    this.tally.add(row, into && ((name) => into.target(name)));
    return true;
  }

  /**
   * Folds the frames stored since the last poll, writes what they changed and pushes the touched
   * points. Concurrent calls share one read (a call during a read makes it read once more).
   * Returns how many frames were folded.
   */
  poll(): Promise<number> {
    if (this.busy) {
      this.again = true;
      return this.busy;
    }
    this.busy = (async () => {
      let folded = 0;
      try {
        do {
          this.again = false;
          for (;;) {
            const rows = await listFramesAfter(this.opts.db, this.opts.runId, this.lastId, PAGE);
            if (rows.length === 0) break;
            folded += await this.fold(rows);
            this.lastId = rows.at(-1)!.id;
            if (rows.length < PAGE) break;
          }
        } while (this.again);
        if (folded > 0) this.unsaved = true;
        await this.saveIfDue();
        return folded;
      } finally {
        this.busy = null;
      }
    })();
    return this.busy;
  }

  /**
   * Finds stored frames the id cursor passed over (an insert that committed after a later one: two
   * hubs' aggregators store the same run) and folds them. Called now and then while the run runs
   * ("running"): it reads only the frames above the settled watermark, so its cost follows the last
   * few reconcile periods, not the run's length. Before the final summary ("final", the default) it
   * compares per-shard counts with what is folded instead and, only should they differ, checks every
   * frame: matching counts already say nothing is missing, so it reads no keys then.
   * Returns how many frames it folded and how many stored frames it read past the watermark.
   */
  async reconcile(mode: "running" | "final" = "final"): Promise<{ folded: number; examined: number }> {
    const { db, runId } = this.opts;
    let folded = 0;
    let examined = 0;
    if (mode === "running") {
      const read = await listFrameKeysAfter(db, runId, this.settledId);
      folded = await this.foldMissing(read.keys);
      examined = read.keys.length;
      this.advanceWatermark(read);
    } else {
      const stored = await countFramesByShard(db, runId);
      if (Object.entries(stored).some(([shard, n]) => (this.seen.get(shard)?.size ?? 0) < n)) {
        const keys = await listFrameKeys(db, runId);
        // Missing frames above the watermark are expected; one below it only from an insert that took
        // its id, then its transaction id more than a reconcile period later.
        const below = keys.filter((k) => k.id <= this.settledId && !this.seen.get(k.shardId)?.has(k.seq)).length;
        if (below > 0) this.opts.log.warn({ runId, below, settledId: this.settledId }, "run meter found frames below its settled watermark");
        folded = await this.foldMissing(keys);
      }
    }
    if (folded > 0) {
      this.opts.log.info({ runId, folded }, "run meter folded frames its cursor had passed over");
      await this.save(false);
    }
    return { folded, examined };
  }

  private async foldMissing(keys: Array<{ id: number; shardId: string; seq: number }>): Promise<number> {
    const missing = keys.filter((k) => !this.seen.get(k.shardId)?.has(k.seq)).map((k) => k.id);
    let folded = 0;
    for (let i = 0; i < missing.length; i += PAGE) folded += await this.fold(await listFramesById(this.opts.db, missing.slice(i, i + PAGE)));
    return folded;
  }

  /**
   * Moves the settled watermark by PostgreSQL's snapshots. A frame with an id up to the candidate
   * (the newest id reconcile k read) that k could not see was held by a transaction that either had a
   * transaction id then, or took one within microseconds of taking the frame's id (an insert takes
   * its transaction id when it writes its first row), so before the next reconcile's snapshot, below
   * that snapshot's xmax. Once a later snapshot's xmin has passed that xmax, every such transaction
   * has ended, and that reconcile, reading above the old watermark, has folded what they stored.
   * A long open transaction anywhere holds xmin back: the watermark waits, never skips.
   */
  private advanceWatermark(read: { keys: Array<{ id: number }>; xmin: bigint; xmax: bigint }): void {
    const c = this.candidate;
    if (c && c.xmax !== null && read.xmin >= c.xmax) {
      this.settledId = Math.max(this.settledId, c.id);
      this.candidate = null;
    } else if (c && c.xmax === null) c.xmax = read.xmax;
    const newest = read.keys.reduce((max, k) => Math.max(max, k.id), this.settledId);
    if (!this.candidate && newest > this.settledId) this.candidate = { id: newest, xmax: null };
  }

  private async fold(rows: IntervalRow[]): Promise<number> {
    const touched = new Set<number>();
    const remerge = new Set<number>();
    let folded = 0;
    for (const row of rows) {
      // A second that left memory (merged before, not in the window) is merged again from what is stored.
      const gone = !this.window.has(row.index) && this.merged.has(row.index);
      const m = gone ? undefined : (this.window.get(row.index) ?? new IntervalMerger(row.index));
      if (!this.take(row, m)) continue;
      folded++;
      touched.add(row.index);
      if (m) {
        m.add(row, true);
        this.window.set(row.index, m);
        this.merged.add(row.index);
      } else remerge.add(row.index);
      this.newest = Math.max(this.newest, row.index);
    }
    if (remerge.size > 0) {
      const stored = await listFramesAtIndexes(this.opts.db, this.opts.runId, [...remerge], Number.MAX_SAFE_INTEGER);
      for (const i of remerge) this.window.set(i, new IntervalMerger(i));
      // Only frames folded into the tally: one the cursor has not reached yet is added when it is.
      for (const r of stored) if (this.seen.get(r.shardId)?.has(r.seq)) this.window.get(r.index)!.add(r);
    }
    const points = await this.writePoints(touched);
    this.evict(remerge);
    if (points.length > 0) this.opts.onPoints?.(this.opts.runId, points);
    return folded;
  }

  private async writePoints(indexes: Iterable<number>): Promise<IntervalPoint[]> {
    const rows = [...indexes]
      .sort((a, b) => a - b)
      .map((i) => {
        const m = this.window.get(i)!;
        return { point: m.point(), histograms: m.histograms(), frames: m.frameCount };
      });
    await upsertRunPoints(this.opts.db, this.opts.runId, rows);
    return rows.map((r) => r.point);
  }

  private evict(also: Iterable<number> = []): void {
    for (const i of this.window.keys()) if (i < this.newest - WINDOW) this.window.delete(i);
    for (const i of also) if (i < this.newest - WINDOW) this.window.delete(i);
  }

  /**
   * The summary of what is folded. `final`: judged as a finished run (sanity checks on); while it
   * runs they are off, since a run seconds in has "nothing back yet" by nature.
   */
  summary(final: boolean): RunSummary | null {
    if (this.tally.frames === 0) return null;
    const plan = this.opts.plan;
    if (!plan) return this.tally.summary([]);
    return this.tally.summary(plan.thresholds, final ? plan : { ...plan, sanity: false });
  }

  /**
   * Polls until `signal` aborts: every `everyMs` (frames other replicas' aggregators stored), and
   * soon after nudge() (this hub's aggregator stored some); reconciles every `reconcileEveryMs`.
   * A failed poll (database blip) is logged and retried at the next one.
   */
  async follow(signal: AbortSignal, everyMs = 1000, reconcileEveryMs = 15_000): Promise<void> {
    let reconciledAt = Date.now();
    while (!signal.aborted) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal.removeEventListener("abort", done);
          this.wake = null;
          resolve();
        };
        const timer = setTimeout(done, everyMs);
        // A nudge waits a moment: agents send a second's frames together, and one read takes them all.
        this.wake = () => {
          clearTimeout(timer);
          setTimeout(done, 50);
        };
        signal.addEventListener("abort", done, { once: true });
      });
      if (signal.aborted) return;
      try {
        await this.poll();
        if (Date.now() - reconciledAt >= reconcileEveryMs) {
          reconciledAt = Date.now();
          await this.reconcile("running");
        }
      } catch (err) {
        this.opts.log.warn(
          { runId: this.opts.runId, err: err instanceof Error ? err.message : String(err) },
          "run meter could not read stored frames; retrying",
        );
      }
    }
  }

  /** Frames were stored for the run: poll soon rather than at the next tick. */
  nudge(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  /** Writes the final summary as the run row has it (with the agents' start report), and the analysis. */
  async saveFinal(summary: RunSummary | null): Promise<void> {
    this.lastAnalysisAt = this.lastSaveAt = Date.now();
    this.unsaved = false;
    await saveRunMeter(this.opts.db, this.opts.runId, { frames: this.tally.frames, summary, analysis: this.tally.analysis() });
  }

  /** Writes the running summary if frames were folded since and it was not written in the last summaryEveryMs. */
  async saveIfDue(): Promise<void> {
    if (this.unsaved && Date.now() - this.lastSaveAt >= (this.opts.summaryEveryMs ?? 1000)) await this.save(false);
  }

  /** Writes the running (or final) summary, and the analysis when due or final. */
  async save(final: boolean): Promise<void> {
    const now = Date.now();
    const withAnalysis = final || now - this.lastAnalysisAt >= (this.opts.analysisEveryMs ?? 10_000);
    if (withAnalysis) this.lastAnalysisAt = now;
    this.lastSaveAt = now;
    this.unsaved = false;
    await saveRunMeter(this.opts.db, this.opts.runId, {
      frames: this.tally.frames,
      summary: this.summary(final),
      ...(withAnalysis ? { analysis: this.tally.analysis() } : {}),
    });
  }
}
