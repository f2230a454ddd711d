import { parentPort } from "node:worker_threads";
import { systemClock } from "../engine/clock";
import { RateFeed } from "../engine/rate-feed";
import { armShard, runShard } from "../engine/run-shard";
import type { FromWorker, ToWorker } from "./worker-messages";

/**
 * An engine worker thread: runs its part of a shard with the same engine (runShard) as one thread
 * would, with its own connections and schedule, and posts each frame, the measured start and the
 * outcome to the main thread, which merges them and keeps the hub link. One part at a time; the
 * thread lives on for the next shard.
 */
export function serveEngineWorker(): void {
  const port = parentPort;
  if (!port) throw new Error("serveEngineWorker runs in a worker thread");
  const post = (m: FromWorker) => port.postMessage(m);
  let controller: AbortController | undefined;
  let rate: RateFeed | undefined;
  port.on("message", (m: ToWorker) => {
    if (m.type === "abort") return controller?.abort(m.reason);
    if (m.type === "rate") return rate?.push({ scale: m.scale, at: m.at, what: m.what });
    if (m.type === "arm") return void armShard(m.plan).then((warmUp) => post({ type: "armed", warmUp }));
    const run = new AbortController();
    controller = run;
    rate = new RateFeed();
    void runShard(m.plan, {
      rate,
      startAt: m.startAt,
      clock: systemClock(m.offsetMs),
      shard: m.shard,
      sourceAddresses: m.sourceAddresses,
      publicOnly: m.publicOnly,
      signal: run.signal,
      onStart: (startedAt) => post({ type: "start", startedAt }),
      onFrame: (frame) => post({ type: "frame", frame }),
    }).then((outcome) => {
      if (controller === run) controller = undefined;
      post({ type: "end", outcome });
    });
  });
  post({ type: "ready" });
}
