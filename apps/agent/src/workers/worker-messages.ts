import type { Plan } from "@volley/contracts";
import type { LiveRate } from "../engine/rate-feed";
import type { WarmUp } from "../engine/shard-warmup";
import type { EngineFrame, ShardOutcome } from "../engine/types";

/** Marks the agent's own engine workers in workerData (the compiled agent's entry is also theirs). */
export const ENGINE_WORKER = "volleyEngineWorker";

/**
 * The compiled agent's entry module (main.ts's own URL, set as it starts): engine threads start
 * there. The spawning code may sit in a chunk of its own (the bin's split bundle), whose URL is not
 * an entry. Unset where main.ts did not start the process (tests import the engine directly).
 */
export const agentEntry: { url?: string } = {};

/** Main thread → worker. */
export type ToWorker =
  | {
      type: "run";
      plan: Plan;
      /** Hub-clock epoch ms of the start instant. */
      startAt: number;
      /** Hub clock − this machine's wall clock at the run's start, ms (the worker's clock uses it). */
      offsetMs: number;
      shard: string;
      sourceAddresses: string[];
      publicOnly: boolean;
    }
  /** Warm the engine for this part before its start instant is set (armShard); answered with "armed". */
  | { type: "arm"; plan: Plan }
  | { type: "abort"; reason: string }
  /** A live rate change for the part it runs (hub-clock epoch ms). */
  | ({ type: "rate" } & LiveRate);

/** Worker → main thread. */
export type FromWorker =
  | { type: "ready" }
  | { type: "armed"; warmUp: WarmUp }
  | { type: "start"; startedAt: number }
  | { type: "frame"; frame: EngineFrame }
  | { type: "end"; outcome: ShardOutcome };
