import { COUNTERS, HISTOGRAMS, errorCount } from "@volley/contracts";
import { decodeHistogram } from "@volley/metrics";
import type { EngineFrame } from "../engine/types";

/** Where progress goes: stderr in production, a fake in tests. */
export interface ProgressSink {
  write(text: string): void;
  /** True on a terminal: one line rewritten in place; false (pipes, CI logs): a plain line per second. */
  isTTY: boolean;
}

/**
 * Live progress, one update per engine frame (the engine emits one per second from the start
 * instant), so the figures are exactly the second's own counts, not a separate sampling.
 */
export class Progress {
  private errors = 0;
  private lineOpen = false;

  constructor(private readonly sink: ProgressSink) {}

  frame(f: EngineFrame): void {
    const c = f.counters;
    this.errors += errorCount(c);
    // The final partial interval is often a sliver (the wait for last replies); the summary has its counts.
    if (f.durationMs < 200) return;
    const seconds = f.durationMs / 1000;
    const encoded = f.histograms[HISTOGRAMS.messageLatency];
    const h = encoded ? decodeHistogram(encoded) : undefined;
    const pct = (p: number) => (h && h.totalCount > 0 ? `${(h.getValueAtPercentile(p) / 1000).toFixed(1)}ms` : "-");
    const elapsed = (f.index * 1000 + f.durationMs) / 1000;
    const line =
      `${elapsed.toFixed(0).padStart(4)}s  conns ${c[COUNTERS.connectionsActive] ?? 0}` +
      `  sent/s ${Math.round((c[COUNTERS.sent] ?? 0) / seconds)}  recv/s ${Math.round((c[COUNTERS.received] ?? 0) / seconds)}` +
      `  p50 ${pct(50)}  p99 ${pct(99)}  errors ${this.errors}${f.health.saturated ? "  [agent saturated]" : ""}`;
    if (this.sink.isTTY) {
      this.sink.write(`\r\x1b[K${line}`);
      this.lineOpen = true;
    } else {
      this.sink.write(`${line}\n`);
    }
  }

  /** Ends the in-place line so whatever follows starts on its own line. */
  done(): void {
    if (this.lineOpen) this.sink.write("\n");
    this.lineOpen = false;
  }
}
