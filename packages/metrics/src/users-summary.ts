import { COUNTERS, ERROR_PREFIX, HISTOGRAMS, type UsersSummary } from "@volley/contracts";
import { addEncoded, createHistogram, type Histogram } from "./histogram";
import type { FlowFrameLike } from "./flow-summary";
import { latencySummary } from "./summary";

const STEP_PREFIX = "step.";
const STEP_ERROR_PREFIX = `${ERROR_PREFIX}${STEP_PREFIX}`;

/**
 * The users section of a run summary, or undefined when no frame carries users' counters. Counts
 * are every frame's (a user failing in warm-up still failed); times leave warm-up out, as the run's
 * latency does.
 */
export function summarizeUsers(frames: readonly FlowFrameLike[]): UsersSummary | undefined {
  let seen = false;
  const counts = { started: 0, completed: 0, failed: 0, dropped: 0, unsent: 0, reconnected: 0, reconnectFailed: 0 };
  const stepH = new Map<string, Histogram>();
  const stepFailed = new Map<string, number>();
  let timeH: Histogram | undefined;
  let reconnectH: Histogram | undefined;
  const links = new ConnectionTally();
  for (const f of frames) {
    const c = f.counters;
    if (COUNTERS.usersStarted in c || COUNTERS.usersDropped in c) seen = true;
    counts.started += c[COUNTERS.usersStarted] ?? 0;
    counts.completed += c[COUNTERS.usersCompleted] ?? 0;
    counts.failed += c[COUNTERS.usersFailed] ?? 0;
    counts.dropped += c[COUNTERS.usersDropped] ?? 0;
    counts.unsent += c[COUNTERS.unsent] ?? 0;
    counts.reconnected += c[COUNTERS.reconnects] ?? 0;
    counts.reconnectFailed += c[COUNTERS.reconnectsFailed] ?? 0;
    for (const [name, n] of Object.entries(c)) {
      if (name.startsWith(STEP_ERROR_PREFIX))
        stepFailed.set(name.slice(STEP_ERROR_PREFIX.length), (stepFailed.get(name.slice(STEP_ERROR_PREFIX.length)) ?? 0) + n);
      else links.count(name, n);
    }
    if (f.warmup) continue;
    for (const [name, b64] of Object.entries(f.histograms)) {
      if (links.time(name, b64)) continue;
      if (name === HISTOGRAMS.userTime) addEncoded((timeH ??= createHistogram(64)), b64);
      else if (name === HISTOGRAMS.reconnectTime) addEncoded((reconnectH ??= createHistogram(64)), b64);
      else if (name.startsWith(STEP_PREFIX)) {
        const step = name.slice(STEP_PREFIX.length);
        let h = stepH.get(step);
        if (!h) stepH.set(step, (h = createHistogram(64)));
        addEncoded(h, b64);
      }
    }
  }
  if (!seen) return undefined;
  const steps = [...new Set([...stepH.keys(), ...stepFailed.keys()])].map((step) => {
    const latency = latencySummary(stepH.get(step));
    return { step, count: latency.count, failed: stepFailed.get(step) ?? 0, latency };
  });
  const { reconnected, reconnectFailed, ...rest } = counts;
  const connections = links.summary();
  return {
    ...rest,
    time: latencySummary(timeH),
    steps,
    reconnects: { reconnected, failed: reconnectFailed, time: latencySummary(reconnectH) },
    ...(connections.length > 0 ? { connections } : {}),
  };
}

type ConnectionCounts = Omit<NonNullable<UsersSummary["connections"]>[number], "connection" | "connect" | "reconnect">;

/** A connection's own metrics are the shard-wide ones with its name after a dot (`connections.opened.feed`). */
const LINK_COUNTERS: [keyof ConnectionCounts, string][] = [
  ["opened", `${COUNTERS.connectionsOpened}.`],
  ["dropped", `${COUNTERS.connectionsDropped}.`],
  ["reconnected", `${COUNTERS.reconnects}.`],
  ["reconnectFailed", `${COUNTERS.reconnectsFailed}.`],
];
const LINK_HISTOGRAMS = { connect: `${HISTOGRAMS.connect}.`, reconnect: `${HISTOGRAMS.reconnectTime}.` } as const;

/** Each named connection's counts (every frame) and times (warm-up left out), merged exactly. */
class ConnectionTally {
  private readonly byName = new Map<string, { counts: ConnectionCounts; connect?: Histogram; reconnect?: Histogram }>();

  private of(name: string) {
    let e = this.byName.get(name);
    if (!e) this.byName.set(name, (e = { counts: { opened: 0, dropped: 0, reconnected: 0, reconnectFailed: 0 } }));
    return e;
  }

  count(metric: string, n: number): void {
    for (const [key, prefix] of LINK_COUNTERS) if (metric.startsWith(prefix)) this.of(metric.slice(prefix.length)).counts[key] += n;
  }

  /** True when `metric` is a connection's own time (taken). */
  time(metric: string, b64: string): boolean {
    for (const key of ["connect", "reconnect"] as const) {
      if (!metric.startsWith(LINK_HISTOGRAMS[key])) continue;
      const e = this.of(metric.slice(LINK_HISTOGRAMS[key].length));
      addEncoded((e[key] ??= createHistogram(64)), b64);
      return true;
    }
    return false;
  }

  summary(): NonNullable<UsersSummary["connections"]> {
    return [...this.byName].map(([connection, e]) => ({ connection, ...e.counts, connect: latencySummary(e.connect), reconnect: latencySummary(e.reconnect) }));
  }
}
