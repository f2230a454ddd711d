import { createHistogram, encodeHistogram, recordMicros, type Histogram } from "./histogram";

/**
 * Collects one interval's counters and histograms, then hands them over as a frame body and starts
 * afresh. Gauges keep their value across intervals; counters reset.
 */
export class IntervalRecorder {
  private histograms = new Map<string, Histogram>();
  private counters = new Map<string, number>();
  private gauges = new Map<string, number>();
  /** Histograms back from release(), reused by cut() so an interval allocates none. */
  private spare: Histogram[] = [];

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
    const { counters, histograms: cut } = this.cut();
    const histograms: Record<string, string> = {};
    for (const [k, h] of cut) {
      histograms[k] = encodeHistogram(h);
      this.release(h);
    }
    return { counters, histograms };
  }

  /**
   * The interval just ended with its histograms not yet encoded: fresh ones take their place at
   * once, so the (much slower) encoding can wait until the caller has time. Only histograms that
   * recorded something are handed over; give each back with release() once encoded.
   */
  cut(): { counters: Record<string, number>; histograms: [string, Histogram][] } {
    const counters: Record<string, number> = {};
    for (const [k, v] of this.counters) counters[k] = v;
    for (const [k, v] of this.gauges) counters[k] = v;
    this.counters.clear();
    const histograms: [string, Histogram][] = [];
    for (const [k, h] of this.histograms) {
      if (h.totalCount === 0) continue;
      histograms.push([k, h]);
      this.histograms.set(k, this.spare.pop() ?? createHistogram(32));
    }
    return { counters, histograms };
  }

  /** Takes back a histogram handed over by cut(), once its contents are no longer needed. */
  release(h: Histogram): void {
    h.reset();
    this.spare.push(h);
  }
}
