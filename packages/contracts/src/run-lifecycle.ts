import { runStatusSchema, type RunStatus } from "./run";

/**
 * The run lifecycle, the one table of it: for each status, the statuses a run may move to and who
 * moves it there. A run ends once (the first final status written stays); the only moves between
 * final statuses are a restatement's, when frames stored after finalization change a verdict the
 * measurements decided (passed, failed, inconclusive). packages/db refuses any other move (markRunRunning, finishRun, restateRun).
 */
export const RUN_LIFECYCLE = {
  queued: {
    running: "hub run worker: the run left its pool's line with its agents",
    aborted: "web: the user aborted it while queued; hub: the abort listener found it still queued",
    errored: "web: it could not be queued; hub: refused while waiting for agents (pool too small, agents.maxWait) or its job failed",
  },
  running: {
    passed: "hub finalization: every threshold and sanity check held",
    failed: "hub finalization: a threshold or sanity check broke (or an abortOnFail threshold stopped it)",
    errored: "hub finalization: a shard errored, an agent was lost (agents.onLoss: error), arming timed out, or the job failed",
    aborted: "hub finalization: the user aborted it",
    degraded: "hub finalization: an agent was lost under agents.onLoss: degrade",
    inconclusive:
      "hub finalization: every threshold held, but no step of its capacity search could be judged (the load generator limited the first step, or it was cut short)",
  },
  passed: {
    failed: "hub restatement: frames stored after finalization break a threshold",
    inconclusive: "hub restatement: frames stored after finalization show the capacity search's first step was limited by the load generator",
  },
  failed: {
    passed: "hub restatement: frames stored after finalization make every threshold hold",
    inconclusive: "hub restatement: frames stored after finalization make every threshold hold, and no step of the capacity search could be judged",
  },
  inconclusive: {
    passed: "hub restatement: frames stored after finalization let a step of the capacity search be judged",
    failed: "hub restatement: frames stored after finalization break a threshold",
  },
  errored: {},
  aborted: {},
  degraded: {},
} as const satisfies Record<RunStatus, Partial<Record<RunStatus, string>>>;

/** Whether a run may move from `from` to `to`. */
export function canMoveRun(from: RunStatus, to: RunStatus): boolean {
  return to in RUN_LIFECYCLE[from];
}

/** The statuses a run may enter `to` from. */
export function runStatusesBefore(to: RunStatus): RunStatus[] {
  return runStatusSchema.options.filter((from) => canMoveRun(from, to));
}

/**
 * A run's reason (and the API's 503 message) when its job could not be put on the runs queue: web
 * queueing a started run, the hub queueing a schedule's. Said plainly with what to do, because the
 * driver's own text ("Connection is closed.", "ECONNREFUSED 127.0.0.1:6379") tells a user neither;
 * that text goes to the log with the run id. `then` is what to do once Redis answers.
 */
export function runNotQueuedReason(then = "start the run again"): string {
  return `could not be queued: the queue (Redis) did not answer; check that Redis is running and REDIS_URL points at it, then ${then}`;
}
