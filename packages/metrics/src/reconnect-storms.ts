import { COUNTERS, HISTOGRAMS, type ReconnectStorm } from "@volley/contracts";
import type { FrameLike } from "./aggregate";
import { addEncoded, addHistogram, createHistogram, type Histogram } from "./histogram";

/** At most this many storms in a summary (the first ones), and seconds of open connections drawn per storm. */
const MAX_STORMS = 100;
const MAX_STORM_SECONDS = 300;

interface StormSecond {
  startedAt: number;
  /** Connections opened minus closed in the second (reconnects added for connection scenarios). */
  delta: number;
  dropped: number;
  reconnected: number;
  failed: number;
  /** reconnect.time of the second's reconnects, µs. */
  reconnect?: Histogram;
}

const round1 = (ms: number) => Math.round(ms * 10) / 10;

/**
 * The run's seconds as the reconnect-storm view needs them, every shard merged: drops, reconnects,
 * the change in open connections and the reconnect times. Added frame by frame (the hub's run
 * meter) or from every frame (reconnectStorms); the storms read the same either way. Memory: a few
 * numbers a second, and a histogram for each second with reconnects.
 */
export class StormSeconds {
  private readonly seconds = new Map<number, StormSecond>();
  /** Users count a reconnect as an open too; connection scenarios count it only as reconnected. */
  private users = false;
  private reconnects = false;

  private secondOf(f: FrameLike): StormSecond {
    let s = this.seconds.get(f.index);
    if (!s) this.seconds.set(f.index, (s = { startedAt: f.startedAt, delta: 0, dropped: 0, reconnected: 0, failed: 0 }));
    s.startedAt = Math.min(s.startedAt, f.startedAt);
    return s;
  }

  /** A frame's counters (its reconnect.time goes in through histogramFor, decoded once by the caller). */
  count(f: FrameLike): void {
    const c = f.counters;
    if (COUNTERS.usersStarted in c || COUNTERS.usersDropped in c) this.users = true;
    if ((c[COUNTERS.reconnects] ?? 0) + (c[COUNTERS.reconnectsFailed] ?? 0) > 0) this.reconnects = true;
    const s = this.secondOf(f);
    s.delta += (c[COUNTERS.connectionsOpened] ?? 0) - (c[COUNTERS.connectionsClosed] ?? 0);
    s.dropped += c[COUNTERS.connectionsDropped] ?? 0;
    s.reconnected += c[COUNTERS.reconnects] ?? 0;
    s.failed += c[COUNTERS.reconnectsFailed] ?? 0;
  }

  /** Where a frame's reconnect.time histogram is merged. */
  histogramFor(f: FrameLike): Histogram {
    const s = this.secondOf(f);
    return (s.reconnect ??= createHistogram(64));
  }

  add(f: FrameLike): void {
    this.count(f);
    const b64 = f.histograms[HISTOGRAMS.reconnectTime];
    if (b64) addEncoded(this.histogramFor(f), b64);
  }

  /**
   * The storms: each run of consecutive seconds with drops, its reconnects counted from its first
   * second until the next storm's (or the run's end). Undefined when nothing reconnected or tried to.
   */
  storms(): ReconnectStorm[] | undefined {
    if (!this.reconnects) return undefined;
    const indexes = [...this.seconds.keys()].sort((a, b) => a - b);
    const open = new Map<number, number>();
    let running = 0;
    for (const i of indexes) {
      const s = this.seconds.get(i)!;
      running += s.delta + (this.users ? 0 : s.reconnected);
      open.set(i, running);
    }
    const starts = indexes.filter((i) => this.seconds.get(i)!.dropped > 0 && !(this.seconds.get(i - 1)?.dropped ?? 0));
    const storms: ReconnectStorm[] = [];
    for (const [k, start] of starts.slice(0, MAX_STORMS).entries()) {
      const until = starts[k + 1] ?? Infinity;
      const window = indexes.filter((i) => i >= start && i < until);
      let burst = 0;
      let dropped = 0;
      while (this.seconds.get(start + burst)?.dropped) dropped += this.seconds.get(start + burst++)!.dropped;
      let reconnected = 0;
      let failed = 0;
      // The dip lasts until every dropped one is back or given up (else to the window's end).
      let settled = window.length - 1;
      const times = createHistogram(64);
      for (const [n, i] of window.entries()) {
        const s = this.seconds.get(i)!;
        reconnected += s.reconnected;
        failed += s.failed;
        if (s.reconnect) addHistogram(times, s.reconnect);
        if (reconnected + failed >= dropped && settled === window.length - 1 && n < settled) settled = n;
      }
      // The k-th fastest of the dropped: the share of those that came back that it stands at.
      const back = (share: number) => {
        const k = Math.ceil(share * dropped);
        if (times.totalCount < k || k === 0) return null;
        return round1(times.getValueAtPercentile((100 * k) / times.totalCount) / 1000);
      };
      const connected = window.slice(0, MAX_STORM_SECONDS).map((i) => open.get(i)!);
      storms.push({
        index: start,
        startedAt: this.seconds.get(start)!.startedAt,
        seconds: burst,
        dropped,
        connectedBefore: open.get(start - 1) ?? null,
        connectedLowest: Math.min(...window.slice(0, settled + 1).map((i) => open.get(i)!)),
        reconnected,
        failed,
        back: { p50: back(0.5), p90: back(0.9), p99: back(0.99) },
        connected,
      });
    }
    return storms;
  }
}

/** The reconnect storms of a run's frames (see StormSeconds). */
export function reconnectStorms(frames: readonly FrameLike[]): ReconnectStorm[] | undefined {
  const seconds = new StormSeconds();
  for (const f of frames) seconds.add(f);
  return seconds.storms();
}
