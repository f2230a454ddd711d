import type { IntervalPoint } from "@volley/contracts";

/**
 * Merges pushed timeline points into the sorted list, replacing points with the same index (a second
 * is re-sent when a slower shard's frame for it lands). The common case, points after the last one,
 * is an append; a one-hour run keeps 3,600 points, so the rare rebuild is cheap too.
 */
export function upsertPoints(prev: IntervalPoint[], incoming: IntervalPoint[]): IntervalPoint[] {
  if (incoming.length === 0) return prev;
  const sorted = [...incoming].sort((a, b) => a.index - b.index);
  const last = prev.at(-1)?.index ?? -Infinity;
  if (sorted[0]!.index > last) return [...prev, ...sorted];
  const byIndex = new Map(prev.map((p) => [p.index, p]));
  for (const p of sorted) byIndex.set(p.index, p);
  return [...byIndex.values()].sort((a, b) => a.index - b.index);
}
