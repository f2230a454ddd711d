/**
 * Lets one log line per key through per window and counts the rest, so a stream of identical
 * refusals (a misconfigured agent retrying a bad token every second, or someone probing) costs one
 * line a minute, saying how many were left out, not one per attempt. Keys are bounded: past
 * `maxKeys` the oldest are forgotten (their next line simply logs again).
 */
export class LogThrottle {
  private readonly keys = new Map<string, { since: number; suppressed: number }>();

  constructor(
    private readonly windowMs = 60_000,
    private readonly maxKeys = 1_000,
  ) {}

  /** Whether to log this occurrence of `key` now, and how many were left out since the last line. */
  take(key: string, nowMs = Date.now()): { log: boolean; suppressed: number } {
    const seen = this.keys.get(key);
    if (seen && nowMs - seen.since < this.windowMs) {
      seen.suppressed++;
      return { log: false, suppressed: 0 };
    }
    const suppressed = seen?.suppressed ?? 0;
    this.keys.delete(key);
    this.keys.set(key, { since: nowMs, suppressed: 0 });
    if (this.keys.size > this.maxKeys) this.keys.delete(this.keys.keys().next().value!);
    return { log: true, suppressed };
  }
}
