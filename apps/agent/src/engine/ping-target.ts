import { fileURLToPath } from "node:url";
import { forkTarget } from "./target-process";

const CHILD = fileURLToPath(new URL("./ping-target-child.ts", import.meta.url));

export interface PingTarget {
  /** The Socket.IO server's base URL (the ping namespace is `/ping`). */
  url: string;
  /** Pings (and echoes) the server has answered so far. */
  count(): Promise<number>;
  /** Ends the server process. */
  stop(): void;
}

/**
 * Test support: the reference Socket.IO ping server (apps/targets) in a process of its own, so an
 * overload test measures the agent's event loop and not the server's work on it too.
 */
export async function startPingTarget(): Promise<PingTarget> {
  const target = await forkTarget(CHILD, "ping target");
  return { url: target.url, count: () => target.ask<number>("count", "count"), stop: target.stop };
}

/** The ping-throughput template's load (100 clients × 1700 pings/s over Socket.IO with acks), all connected at once. */
export function pingThroughputPlan(url: string) {
  return {
    name: "ping throughput, all at once",
    target: { url: `${url}/ping`, protocol: "socketio", socketio: { transports: ["websocket"], event: "ping", ack: true }, connectTimeout: "5s" },
    connections: { count: 100, rate: 1000 },
    scenario: { kind: "echo", message: { bytes: 64, rate: 1700, per: "connection", arrival: "constant", timeout: "10s" }, duration: "30s" },
  } as const;
}

/** Tracks the worst gap between 10 ms timer callbacks on this event loop, less the 10 ms: how long it was blocked. */
export function loopWatch(): { stop: () => number } {
  let last = performance.now();
  let worst = 0;
  const t = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last - 10);
    last = now;
  }, 10);
  return {
    stop: () => {
      clearInterval(t);
      return Math.max(worst, performance.now() - last - 10);
    },
  };
}
