import type { Logger } from "pino";
import { updateShard, type Db } from "@volley/db";
import type { RunCoordinator } from "../coordination/run-coordinator";
import { errorMessage, seconds, sleep } from "../util/wait";

export interface OrphanWatchOptions {
  runId: string;
  shardIds: readonly string[];
  db: Db;
  coordinator: RunCoordinator;
  log: Logger;
  /** How long a started shard may go unheld before its agent counts as lost (the agents' reconnect grace). */
  graceMs: number;
  checkEveryMs: number;
  signal: AbortSignal;
}

/**
 * Finds a started run's orphaned shards. A hub that holds a shard notices its agent leaving, but a
 * hub that dies takes that watch with it: when its agent does not come back to another hub (which
 * would adopt the shard), nobody would end the shard until the run's deadline. The run's
 * supervisor therefore checks the hold marks (RunCoordinator.holdShard): a shard that no live hub
 * has held for `graceMs` ends as lost, naming its agent, and agents.onLoss decides the run, as
 * for any lost agent. Runs until `signal` aborts.
 */
export async function watchOrphanedShards(opts: OrphanWatchOptions): Promise<void> {
  const { runId, db, coordinator, log, graceMs, signal } = opts;
  const unheldSince = new Map<string, number>();
  while (!signal.aborted) {
    await sleep(opts.checkEveryMs, signal);
    if (signal.aborted) return;
    try {
      const state = await coordinator.getState(runId);
      const open = opts.shardIds.filter((id) => !state.ended.has(id));
      const held = await coordinator.heldShards(open);
      const now = Date.now();
      for (const shardId of open) {
        if (held.has(shardId)) {
          unheldSince.delete(shardId);
          continue;
        }
        const since = unheldSince.get(shardId) ?? now;
        unheldSince.set(shardId, since);
        if (now - since < graceMs || signal.aborted) continue;
        const armed = state.armed.get(shardId);
        const who = armed ? `agent ${armed.agentName} (${armed.agentId})` : "its agent";
        const error = `${who} lost: the hub holding its shard stopped and the agent did not reconnect within ${seconds(graceMs)}`;
        log.warn({ runId, shardId, agentId: armed?.agentId }, "shard held by no hub past the grace period; its agent counts as lost");
        await updateShard(db, shardId, { status: "errored", error, endedAt: new Date() });
        await coordinator.markEnded(runId, shardId, {
          status: "errored",
          error,
          frames: null,
          agentId: armed?.agentId ?? null,
          agentName: armed?.agentName ?? null,
          lost: true,
        });
      }
    } catch (err) {
      // A Redis or database blip: the next check tries again.
      log.warn({ runId, err: errorMessage(err) }, "could not check the run's shards for orphans");
    }
  }
}
