import type { Health } from "@volley/contracts";
import { encodeHistogram, mergeEncoded } from "@volley/metrics";
import type { EngineFrame } from "../engine/types";

/** A frame carries at most this many samples (intervalFrameSchema). */
const MAX_SAMPLES = 100;

/**
 * Merges the worker threads' frames of one shard into one frame per interval, exactly: counters
 * (and the active-connections gauge) summed, histograms added bucket by bucket, so the hub gets
 * what one thread running the whole shard would have sent. Interval k goes out once every worker
 * has sent its frame k or has ended before it (a worker that drained early sends nothing more), in
 * order, so the shard's frames keep one sequence.
 */
export class FrameMerge {
  private readonly pending = new Map<number, (EngineFrame | undefined)[]>();
  /** Per worker: its last frame's index once it has ended (-1: ended with none). */
  private readonly lastIndex: (number | undefined)[];
  private next = 0;
  /** Frames emitted so far. */
  emitted = 0;

  constructor(
    private readonly workers: number,
    private readonly onFrame: (frame: EngineFrame) => void,
  ) {
    this.lastIndex = Array.from({ length: workers }, () => undefined);
  }

  add(worker: number, frame: EngineFrame): void {
    let slots = this.pending.get(frame.index);
    if (!slots) this.pending.set(frame.index, (slots = Array.from({ length: this.workers }, () => undefined)));
    slots[worker] = frame;
    this.drain();
  }

  /** Worker `worker` has ended after sending `frames` frames (indexes 0 … frames − 1). */
  ended(worker: number, frames: number): void {
    this.lastIndex[worker] = frames - 1;
    this.drain();
  }

  private drain(): void {
    for (;;) {
      const k = this.next;
      const slots = this.pending.get(k);
      if (!slots) return;
      for (let w = 0; w < this.workers; w++) {
        const last = this.lastIndex[w];
        if (!slots[w] && (last === undefined || last >= k)) return; // still to come
      }
      this.pending.delete(k);
      this.next++;
      this.emitted++;
      this.onFrame(mergeFrames(slots));
    }
  }
}

/**
 * One interval's frames from several workers as one frame. Each worker's own health is kept in
 * `health.workers`; the frame's health is the worst worker's, so one saturated worker flags it.
 */
export function mergeFrames(slots: readonly (EngineFrame | undefined)[]): EngineFrame {
  const frames = slots.filter((f): f is EngineFrame => f !== undefined);
  const first = frames[0]!;
  if (slots.length === 1) return first;
  const counters: Record<string, number> = {};
  const encoded = new Map<string, string[]>();
  let samples: NonNullable<EngineFrame["samples"]> = [];
  for (const f of frames) {
    for (const [k, v] of Object.entries(f.counters)) counters[k] = (counters[k] ?? 0) + v;
    for (const [k, h] of Object.entries(f.histograms)) {
      const list = encoded.get(k);
      if (list) list.push(h);
      else encoded.set(k, [h]);
    }
    if (f.samples) samples = samples.concat(f.samples);
  }
  const histograms: Record<string, string> = {};
  // A histogram only one worker recorded passes as it is: adding it to nothing is the same histogram.
  for (const [k, list] of encoded) histograms[k] = list.length === 1 ? list[0]! : encodeHistogram(mergeEncoded(list));
  const durationMs = Math.max(...frames.map((f) => f.durationMs));
  const activeMs = Math.max(...frames.map((f) => f.activeMs ?? f.durationMs));
  const stage = frames.find((f) => f.stage !== undefined)?.stage;
  const step = frames.find((f) => f.step !== undefined)?.step;
  return {
    index: first.index,
    startedAt: first.startedAt,
    durationMs,
    activeMs: Math.min(durationMs, activeMs),
    warmup: first.warmup,
    counters,
    histograms,
    health: mergeHealth(slots.map((f) => f?.health)),
    ...(samples.length > 0 ? { samples: dedupe(samples).slice(0, MAX_SAMPLES) } : {}),
    ...(stage !== undefined ? { stage } : {}),
    ...(step ? { step } : {}),
  };
}

/** The worst of each reading across workers (a worker with no frame this interval had ended: it counts as idle). */
export function mergeHealth(healths: readonly (Health | undefined)[]): Health {
  const idle: Health = { cpu: 0, eventLoopDelayMs: { p50: 0, max: 0 }, rssMb: 0, sendLagMaxMs: 0, saturated: false };
  const all = healths.map((h) => h ?? idle);
  return {
    cpu: Math.max(...all.map((h) => h.cpu)),
    eventLoopDelayMs: { p50: Math.max(...all.map((h) => h.eventLoopDelayMs.p50)), max: Math.max(...all.map((h) => h.eventLoopDelayMs.max)) },
    ...(all.some((h) => h.loopBusy !== undefined) ? { loopBusy: Math.max(...all.map((h) => h.loopBusy ?? 0)) } : {}),
    ...(all.some((h) => h.cpuWait !== undefined) ? { cpuWait: Math.max(...all.map((h) => h.cpuWait ?? 0)) } : {}),
    // One process: every worker reads the same resident set; the largest reading is the latest.
    rssMb: Math.max(...all.map((h) => h.rssMb)),
    sendLagMaxMs: Math.max(...all.map((h) => h.sendLagMaxMs)),
    saturated: all.some((h) => h.saturated),
    workers: all.map(({ cpu, eventLoopDelayMs, loopBusy, cpuWait, sendLagMaxMs, saturated }) => ({
      cpu,
      eventLoopDelayMs,
      ...(loopBusy !== undefined ? { loopBusy } : {}),
      ...(cpuWait !== undefined ? { cpuWait } : {}),
      sendLagMaxMs,
      saturated,
    })),
  };
}

/**
 * Error samples are distinct texts per class (one thread keeps each text once), so the same text from
 * two workers is kept once. Flow samples are kept as one thread keeps them, repeats included: each is
 * a message the server sent, and counts of them mean something.
 */
function dedupe<T extends { event: string; data: string; kind?: string }>(samples: T[]): T[] {
  const seen = new Set<string>();
  return samples.filter((s) => {
    if (s.kind !== "error") return true;
    const key = `${s.event}\u0000${s.data}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
