import { z } from "zod";

/** How a shard ends: as its agent reports it (shard.end), or as the hub decides it (agent lost, overdue, stood down). */
export const shardEndStatusSchema = z.enum(["completed", "errored", "aborted"]);
export type ShardEndStatus = z.infer<typeof shardEndStatusSchema>;

/** Every state of a shard's row: waiting in its pool's queue, taken by an agent (arming), running, ended. */
export const shardStatusSchema = z.enum(["pending", "assigned", "running", ...shardEndStatusSchema.options]);
export type ShardStatus = z.infer<typeof shardStatusSchema>;

/**
 * The shard lifecycle, the one table of it: for each state, the states it may move to and who moves
 * it there. An ended shard never moves again, so whichever end is recorded first (the agent's
 * shard.end, the orphan watch, a stand-down) is the one that stays. packages/db refuses any other
 * move (updateShard), so the hub cannot write one by mistake.
 */
export const SHARD_LIFECYCLE = {
  pending: {
    assigned: "hub shard runner: an idle agent of the pool took the shard's job",
    aborted: "hub: the run was aborted while the job waited (stand-down removed it, or the runner found the run stopped)",
    errored: "hub run supervisor: the run errored while the job waited (stand-down removed it from the queue)",
  },
  assigned: {
    running: "hub shard runner: the start instant was sent to the agent",
    completed: "agent: shard.end before the runner recorded the start",
    errored: "agent: shard.end errored (could not arm); hub: agent lost, did not arm, or overdue",
    aborted: "agent: shard.end after shard.abort (the run stopped before it started)",
  },
  running: {
    completed: "agent: shard.end completed",
    errored: "agent: shard.end errored; hub: agent lost, overdue, or no live hub held the shard (orphan watch)",
    aborted: "agent: shard.end after shard.abort (user abort, abortOnFail threshold, another agent lost)",
  },
  completed: {},
  errored: {},
  aborted: {},
} as const satisfies Record<ShardStatus, Partial<Record<ShardStatus, string>>>;

/** Whether a shard may move from `from` to `to`. */
export function canMoveShard(from: ShardStatus, to: ShardStatus): boolean {
  return to in SHARD_LIFECYCLE[from];
}

/** The states a shard may enter `to` from. */
export function shardStatusesBefore(to: ShardStatus): ShardStatus[] {
  return shardStatusSchema.options.filter((from) => canMoveShard(from, to));
}
