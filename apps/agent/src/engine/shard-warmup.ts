import type { AddressInfo } from "node:net";
import type { Plan } from "@volley/contracts";
import type { Connection, Driver } from "../drivers/driver";
import { driverFor } from "../drivers/driver-for";
import { systemClock } from "./clock";
import { prestartSleeper } from "./precise-wake";
import { ShardEngine } from "./shard-engine";

/** What a warm-up did, for logs and tests. */
export interface WarmUp {
  /** Round trips the dry run completed (0: none ran). */
  roundTrips: number;
  /** The dry run's engine path: `loopback socket` (the plan's own driver against an echo in this thread) or `in memory`. */
  path?: "loopback socket" | "in memory";
  /** Why no dry run ran, when none did. */
  skipped?: string;
  ms: number;
}

/** A dry run takes at most this long; longer adds nothing the JIT has not seen by then. */
const DRY_MAX_MS = 150;
/** Less time than this before the deadline: no dry run (a sleeper thread is still started). */
const DRY_MIN_MS = 40;
/** Connects warm the ws handshake too: 50 connects after 32 cost a median 0.53 ms of CPU each, after 8 0.59, cold 0.76. */
const DRY_CONNECTIONS = 32;
/** Messages per second in all: enough calls for V8 to optimize the hot paths within a dry run. */
const DRY_RATE = 4000;

/**
 * A plan sending less than this in all (msg/s) gets no dry run: its sends are seconds apart and
 * cold either way, and a standalone run's cost outside the run (issue 29's floor) stays its own.
 */
const DRY_FROM_RATE = 100;

/** When this thread last finished a dry run, per protocol (local epoch ms). */
const dryRunAt = new Map<string, number>();

/** When this thread last finished a dry run for `protocol` (local epoch ms), if it has. */
export function warmedAt(protocol: string): number | undefined {
  return dryRunAt.get(protocol);
}

/**
 * Warms a shard's engine before its start instant, on the thread that will run it, so the first
 * measured second is not spent starting threads and running cold code (issue 29: the first seconds
 * read send lag p99 2.5–3 ms against 0.15–0.5 ms steady, and a 10,000 msg/s core read saturated):
 *
 * - the precise-wake sleeper thread is started and parked for the shard's engine to take;
 * - a dry run of the same engine on the plan's own message shape (bytes, per, arrival, scenario
 *   kind): connections opened, schedules, sends, replies decoded and timed, histograms recorded
 *   and encoded into a frame nobody receives. For a ws plan it runs the ws driver against a
 *   loopback echo served in this thread (the ws client's handshake, framing and socket paths);
 *   for other protocols through an in-memory echo (the engine's paths, not the protocol client's).
 *   Never through a driver a caller injected (a test's): its own counts stay the shard's.
 *
 * Nothing goes to the target: the dry run's URL is this thread's own server (no lookup, no source
 * address, no plan header reaches anyone else). Nothing is hidden from the shard's measurement: the
 * dry run has its own recorder and frames, and ends before `untilMs` (local epoch ms), the shard's
 * start instant less a margin, or at `signal`. A plan sending under DRY_FROM_RATE gets the sleeper
 * only. With `reuseWithinMs`, a dry run this thread finished
 * that recently for the same protocol (the shard's arm) stands, and none runs again this close to
 * the start. Flows, users and HTTP scenarios get the sleeper only (their steps and requests would
 * need the application). Never rejects.
 */
export async function warmShard(plan: Plan, untilMs: number, opts: { signal?: AbortSignal; reuseWithinMs?: number } = {}): Promise<WarmUp> {
  const { signal } = opts;
  const began = Date.now();
  const done = (w: Omit<WarmUp, "ms">): WarmUp => ({ ...w, ms: Date.now() - began });
  await byDeadline(prestartSleeper(), untilMs);
  const s = plan.scenario;
  if (s.kind !== "echo") return done({ roundTrips: 0, skipped: `a ${s.kind} scenario is not dry-run` });
  if (plan.flow) return done({ roundTrips: 0, skipped: "a flow is not dry-run" });
  const totalRate = s.message.per === "connection" ? s.message.rate * plan.connections.count : s.message.rate;
  if (totalRate < DRY_FROM_RATE) return done({ roundTrips: 0, skipped: `${totalRate} msg/s in all is below ${DRY_FROM_RATE}` });
  const protocol = plan.target.protocol;
  const lastMs = Date.now() - (dryRunAt.get(protocol) ?? -Infinity);
  if (lastMs < (opts.reuseWithinMs ?? 0)) return done({ roundTrips: 0, skipped: `warmed ${lastMs} ms ago` });
  const runMs = Math.min(DRY_MAX_MS, untilMs - Date.now() - DRY_MIN_MS);
  if (runMs < DRY_MIN_MS) return done({ roundTrips: 0, skipped: "too little time before the start instant" });
  try {
    let warm: Omit<WarmUp, "ms">;
    if (protocol === "ws") {
      const [driver, echo] = await Promise.all([driverFor("ws")!, wsLoopbackEcho()]);
      try {
        warm = { roundTrips: await dryRun(plan, driver, echo.url, untilMs, runMs, signal), path: "loopback socket" };
      } finally {
        echo.close();
      }
    } else warm = { roundTrips: await dryRun(plan, memoryEcho(protocol), "memory://warm-up/", untilMs, runMs, signal), path: "in memory" };
    if (warm.roundTrips > 0) dryRunAt.set(protocol, Date.now());
    return done(warm);
  } catch (err) {
    return done({ roundTrips: 0, skipped: `the dry run failed: ${(err as Error).message}` });
  }
}

/** The plan's message shape at DRY_RATE over a few connections, for `runMs`, against `url`; its round trips. */
async function dryRun(plan: Plan, driver: Driver, url: string, untilMs: number, runMs: number, signal: AbortSignal | undefined): Promise<number> {
  const s = plan.scenario;
  const count = Math.min(DRY_CONNECTIONS, plan.connections.count);
  const msg = s.message;
  const dry: Plan = {
    ...plan,
    name: `${plan.name} (warm-up)`,
    target: { ...plan.target, url, connectTimeout: Math.max(50, runMs) },
    connections: { count, rate: 100_000 },
    scenario: { ...s, warmup: 0, duration: runMs, message: { ...msg, rate: msg.per === "connection" ? DRY_RATE / count : DRY_RATE, timeout: 200 } },
    sweep: undefined,
    thresholds: [],
  };
  // A hard stop at the deadline whatever the engine still waits for (a slow reply, a close).
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort("warm-up deadline"), Math.max(0, untilMs - Date.now()));
  const onAbort = () => stop.abort("shard aborted");
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const outcome = await new ShardEngine(dry, { driver, clock: systemClock(), startAt: Date.now() + 1, signal: stop.signal, onFrame: () => {} }).run();
    return outcome.totals.received;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }
}

/** A ws echo on 127.0.0.1, in this thread: each message straight back in the frame type it came in. */
async function wsLoopbackEcho(): Promise<{ url: string; close: () => void }> {
  const { WebSocketServer } = await import("ws");
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: false, clientTracking: true });
  server.on("connection", (ws) => ws.on("message", (data, isBinary) => ws.send(data as Buffer, { binary: isBinary })));
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}/`,
    close: () => {
      for (const c of server.clients) c.terminate();
      server.close();
    },
  };
}

/** Connections that hand every message back on the next turn of the event loop, as a socket would. */
function memoryEcho(protocol: string): Driver {
  return {
    protocol,
    connect: () => {
      let onMessage: (data: Buffer | string) => void = () => {};
      let onClose: (info: { byServer: boolean }) => void = () => {};
      let open = true;
      const conn: Connection = {
        send: (payload) => {
          if (open) setImmediate(() => open && onMessage(payload));
        },
        onMessage: (cb) => void (onMessage = cb),
        onClose: (cb) => void (onClose = cb),
        close: () => {
          if (!open) return;
          open = false;
          onClose({ byServer: false });
        },
      };
      return Promise.resolve(conn);
    },
  };
}

/** `p`, or nothing once `untilMs` passes (the timer keeps the process alive: the sleeper thread does not). */
function byDeadline(p: Promise<void>, untilMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, untilMs - Date.now()))))]).finally(() => clearTimeout(timer));
}
