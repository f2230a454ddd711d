export interface ClockEstimate {
  /** hub − local wall clock, ms. */
  offsetMs: number;
  /** Round trip of the sample the offset came from: the offset is good to ± rtt/2. */
  rttMs: number;
}

/**
 * NTP-style offset estimate: ask the hub for its time `samples` times and keep the exchange with the
 * smallest round trip, whose midpoint is least disturbed by queueing. Returns undefined when no
 * exchange succeeded.
 */
export async function estimateClockOffset(askHubTime: () => Promise<number>, samples = 8, now: () => number = Date.now): Promise<ClockEstimate | undefined> {
  let best: ClockEstimate | undefined;
  for (let i = 0; i < samples; i++) {
    const t0 = now();
    let hubTime: number;
    try {
      hubTime = await askHubTime();
    } catch {
      continue;
    }
    const t1 = now();
    const rttMs = t1 - t0;
    if (!best || rttMs < best.rttMs) best = { offsetMs: hubTime - (t0 + t1) / 2, rttMs };
  }
  return best;
}
