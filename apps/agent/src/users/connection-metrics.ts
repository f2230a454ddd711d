import { COUNTERS, HISTOGRAMS } from "@volley/contracts";
import type { IntervalRecorder } from "@volley/metrics";

/**
 * Users holding several connections (user-connections.ts): each connection's own counts and times,
 * under its name after the shard-wide metric's (`connections.opened.feed`, `connect.time.feed`,
 * µs), beside the totals, which still count every connection.
 */
export interface ConnectionMetrics {
  opened(name: string, connectUs: number): void;
  dropped(name: string): void;
  /** Reconnected after `afterUs` (from the drop), or undefined: every attempt failed. */
  reconnected(name: string, afterUs: number | undefined): void;
}

/** The per-connection metric of a shard-wide one: `<metric>.<connection name>`. */
export const perConnection = (metric: string, name: string) => `${metric}.${name}`;

export function connectionMetrics(recorder: IntervalRecorder): ConnectionMetrics {
  return {
    opened(name, connectUs) {
      recorder.increment(perConnection(COUNTERS.connectionsOpened, name));
      recorder.recordMicros(perConnection(HISTOGRAMS.connect, name), connectUs);
    },
    dropped(name) {
      recorder.increment(perConnection(COUNTERS.connectionsDropped, name));
    },
    reconnected(name, afterUs) {
      if (afterUs === undefined) return recorder.increment(perConnection(COUNTERS.reconnectsFailed, name));
      recorder.increment(perConnection(COUNTERS.reconnects, name));
      recorder.recordMicros(perConnection(HISTOGRAMS.reconnectTime, name), afterUs);
    },
  };
}
