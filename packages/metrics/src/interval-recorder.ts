import { createHistogram, encodeHistogram, recordMicros, type Histogram } from "./histogram";

/**
 * Collects one interval's counters and histograms, then hands them over as a frame body and starts
 * afresh. Gauges keep their value across intervals; counters reset.
 */
export class IntervalRecorder {
  private histograms = new Map<string, Histogram>();
  private counters = new Map<string, number>();
  private gauges = new Map<string, number>();

  recordMicros(metric: string, micros: number): void {
    let h = this.histograms.get(metric);
    if (!h) {
      h = createHistogram(32);
      this.histograms.set(metric, h);
    }
    recordMicros(h, micros);
  }

  increment(counter: string, by = 1): void {
    this.counters.set(counter, (this.counters.get(counter) ?? 0) + by);
  }

  setGauge(gauge: string, value: number): void {
    this.gauges.set(gauge, value);
  }

  /** Counters, gauges and encoded histograms of the interval just ended; resets counters and histograms. */
  take(): { counters: Record<string, number>; histograms: Record<string, string> } {
    const counters: Record<string, number> = {};
    for (const [k, v] of this.counters) counters[k] = v;
    for (const [k, v] of this.gauges) counters[k] = v;
    const histograms: Record<string, string> = {};
    for (const [k, h] of this.histograms) {
      if (h.totalCount > 0) histograms[k] = encodeHistogram(h);
      h.reset();
    }
    this.counters.clear();
    return { counters, histograms };
  }
}
