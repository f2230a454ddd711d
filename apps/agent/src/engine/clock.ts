/**
 * Two clocks: a monotonic one for every duration the engine measures (never jumps when NTP steps
 * the wall clock), and the hub's wall clock for start instants and frame timestamps.
 */
export interface Clock {
  /** Monotonic microseconds (arbitrary origin, sub-µs precision). */
  monoUs(): number;
  /** Hub-clock epoch milliseconds: this machine's wall clock corrected by the measured offset. */
  hubNowMs(): number;
}

/** The local clocks, with the hub offset (hub − local, ms) read at every call so a resync applies. */
export function systemClock(offsetMs: number | (() => number) = 0): Clock {
  const offset = typeof offsetMs === "function" ? offsetMs : () => offsetMs;
  return {
    monoUs: () => performance.now() * 1000,
    hubNowMs: () => Date.now() + offset(),
  };
}
