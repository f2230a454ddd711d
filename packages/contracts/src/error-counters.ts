import { ERROR_PREFIX } from "./frame";

type Counters = Readonly<Record<string, number>> | ReadonlyMap<string, number>;

const entries = (c: Counters): Iterable<[string, number]> => (c instanceof Map ? c.entries() : Object.entries(c));

/** Errors of every class in a set of counters: the sum of its `errors.<class>` counters. The one place this sum is written. */
export function errorCount(counters: Counters): number {
  let n = 0;
  for (const [k, v] of entries(counters)) if (k.startsWith(ERROR_PREFIX)) n += v;
  return n;
}

/** The same counters by class (`errors.refused` → `refused`), added into `into` when given. */
export function errorsByClass(counters: Counters, into: Record<string, number> = {}): Record<string, number> {
  for (const [k, v] of entries(counters)) {
    if (!k.startsWith(ERROR_PREFIX)) continue;
    const cls = k.slice(ERROR_PREFIX.length);
    into[cls] = (into[cls] ?? 0) + v;
  }
  return into;
}
