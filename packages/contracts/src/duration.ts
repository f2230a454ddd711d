import { z } from "zod";

const DURATION_RE = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/;
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/** A duration written as "500ms", "10s", "2m", "1h", or a number of milliseconds. */
export const durationSchema = z.union([
  z.number().int().nonnegative(),
  z.string().regex(DURATION_RE, { message: 'use a number of milliseconds or a string like "500ms", "10s", "2m"' }),
]);
export type Duration = z.infer<typeof durationSchema>;

export function durationMs(value: Duration): number {
  if (typeof value === "number") return value;
  const m = DURATION_RE.exec(value);
  if (!m) throw new Error(`invalid duration "${value}"`);
  return Math.round(Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS]);
}
