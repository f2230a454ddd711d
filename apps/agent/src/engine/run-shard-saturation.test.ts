import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS, planSchema } from "@volley/contracts";
import { mergeEncoded, summarizeRun } from "@volley/metrics";
import { total } from "./engine-test-kit";
import { runShard } from "./run-shard";
import type { EngineFrame } from "./types";

const CHILD = fileURLToPath(new URL("./ping-target-child.ts", import.meta.url));

/** The reference Socket.IO ping server in its own process; `count()` asks it how many pings it answered. */
async function pingTarget(): Promise<{ url: string; count: () => Promise<number>; child: ChildProcess }> {
  const child = fork(CHILD, [], { execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("ping target did not start in 20 s")), 20_000);
    child.once("message", (m) => {
      clearTimeout(timer);
      resolve((m as { url: string }).url);
    });
    child.once("exit", (code) => reject(new Error(`ping target exited with ${code}`)));
  });
  const count = () =>
    new Promise<number>((resolve) => {
      child.once("message", (m) => resolve((m as { count: number }).count));
      child.send("count");
    });
  return { url, count, child };
}

/** Gaps between 10 ms timer callbacks on this loop, less the 10 ms: how long the loop was blocked. */
function loopWatch(): { stop: () => number } {
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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.disconnect();
});

describe("a shard far beyond the agent's capacity", () => {
  it(
    "keeps the event loop turning, sheds what is hopelessly late (counted, saturated), and stops sending within 1 s of an abort",
    async () => {
      const target = await pingTarget();
      children.push(target.child);
      // The ping-throughput template's load (100 clients × 1700 pings/s), all connected at once.
      const plan = planSchema.parse({
        name: "saturation",
        target: { url: `${target.url}/ping`, protocol: "socketio", socketio: { transports: ["websocket"], event: "ping", ack: true }, connectTimeout: "5s" },
        connections: { count: 100, rate: 1000 },
        scenario: { kind: "echo", message: { bytes: 64, rate: 1700, per: "connection", arrival: "constant", timeout: "10s" }, duration: "30s" },
      });
      const frames: EngineFrame[] = [];
      const controller = new AbortController();
      const watch = loopWatch();
      let startedAt = 0;
      const running = runShard(plan, {
        startAt: Date.now() + 50,
        onFrame: (f) => frames.push(f),
        onStart: () => (startedAt = performance.now()),
        signal: controller.signal,
      });
      // Long enough to fall more than a second behind (shedding starts there) on any machine.
      await sleep(4500);
      controller.abort("stopped by the test");
      const abortedAt = performance.now();
      const outcome = await running;
      const endedInMs = performance.now() - abortedAt;
      const blockedMs = watch.stop();

      await sleep(1000);
      const atOneSecond = await target.count();
      await sleep(1500);
      const later = await target.count();

      expect(outcome.status).toBe("aborted");
      expect(startedAt).toBeGreaterThan(0);
      // The loop never stalled (it was ~23 s before the engine yielded per turn), so heartbeats and the abort get through.
      expect(blockedMs).toBeLessThan(500);
      expect(endedInMs).toBeLessThan(1000);
      // The server saw its last ping within 1 s of the abort.
      expect(later).toBe(atOneSecond);

      const { totals } = outcome;
      expect(totals.sent).toBeGreaterThan(1000);
      expect(totals.shed).toBeGreaterThan(0);
      // Every slot that came due was either sent or shed, and both carry their send lag.
      expect(total(frames, COUNTERS.sent)).toBe(totals.sent);
      expect(total(frames, COUNTERS.shed)).toBe(totals.shed);
      const lag = mergeEncoded(frames.flatMap((f) => f.histograms[HISTOGRAMS.sendLag] ?? []));
      expect(lag.totalCount).toBe(totals.sent + totals.shed);
      expect(lag.maxValue / 1000).toBeGreaterThan(1000);
      // The frames say the agent, not the target, was the bottleneck.
      expect(frames.some((f) => f.health.saturated && (f.counters[COUNTERS.shed] ?? 0) > 0)).toBe(true);
      // And so does the run summary the API serves.
      const summary = summarizeRun(frames, []);
      expect(summary.messages).toMatchObject({ sent: totals.sent, shed: totals.shed });
      expect(summary.intervals.saturated).toBeGreaterThan(0);
    },
    60_000,
  );
});
