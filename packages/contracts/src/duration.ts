import { z } from "zod";

const DURATION_RE = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/;
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/**
 * The longest any duration in a plan may be: 7 days. Past 2^31 ms (24.8 days) Node's timers overflow
 * and fire at once; a week also bounds how long one run holds its agents. A longer soak is several runs.
 */
export const MAX_DURATION_MS = 7 * 24 * 3_600_000;
export const MAX_DURATION_FIX = `must be at most 7 days (168h, ${MAX_DURATION_MS} ms); split a longer test into several runs`;

/** A duration written as "500ms", "10s", "2m", "1h", or a number of milliseconds; at most MAX_DURATION_MS. */
export const durationSchema = z
  .union([z.number().int().nonnegative(), z.string().regex(DURATION_RE, { message: 'use a number of milliseconds or a string like "500ms", "10s", "2m"' })])
  // zod runs refinements on values the union already refused: only judge what parses.
  .refine((d) => (typeof d === "number" || DURATION_RE.test(d) ? durationMs(d) <= MAX_DURATION_MS : true), MAX_DURATION_FIX);
export type Duration = z.infer<typeof durationSchema>;

export function durationMs(value: number | string): number {
  if (typeof value === "number") return value;
  const m = DURATION_RE.exec(value);
  if (!m) throw new Error(`invalid duration "${value}"`);
  return Math.round(Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS]);
}
