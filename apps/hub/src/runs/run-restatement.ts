import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { FINAL_RUN_STATUSES } from "@volley/contracts";
import { countFramesByShard, getRunOfAnyOrg, restateRun, type Db } from "@volley/db";
import { JUDGED_FIELD, runStateKey, type JudgedRun } from "../coordination/run-coordinator";
import type { Restatement } from "../webhooks/webhook-dispatcher";
import type { RunEvents } from "./run-events";
import { decideOutcome } from "./run-outcome";
import { RunMeter } from "./run-meter";

export interface RestatementDeps {
  db: Db;
  redis: Redis;
  events: RunEvents;
  log: Logger;
  webhooks: { runFinished(runId: string, restatement?: Restatement): Promise<void> };
}

/**
 * Frames can land after their run was finalized (the database failed for longer than the
 * finalizer waited; the chaos soak saw 8-17 % of a run's frames arrive 10-18 s late). Once the
 * run's stream is drained, this recomputes the summary from every stored frame and, when the
 * measurements (thresholds, a capacity search) had decided the status, the verdict too, so no run keeps a verdict judged on part of
 * its data. A status an abort, error or lost agent decided stays; its summary is still completed.
 * When the outcome or the summary changed, the run's webhooks get the corrected run again, marked
 * as a restatement: a CI job that gated on the first delivery must hear that the verdict moved.
 * Returns whether the run was restated. Throws when the database fails (the caller retries).
 */
export async function restateLateFrames(deps: RestatementDeps, runId: string): Promise<boolean> {
  const { db, redis, events, log, webhooks } = deps;
  const raw = await redis.hget(runStateKey(runId), JUDGED_FIELD);
  if (!raw) return false;
  const judged = JSON.parse(raw) as JudgedRun;
  const stored = Object.values(await countFramesByShard(db, runId)).reduce((a, b) => a + b, 0);
  if (stored <= judged.frames) return false;
  const run = await getRunOfAnyOrg(db, runId);
  if (!run || !FINAL_RUN_STATUSES.includes(run.status)) return false;

  // Recomputed from the raw frames: the run's meter (merged points, summary, analysis) is rebuilt and rewritten.
  const meter = await RunMeter.replay({ db, runId, plan: run.plan, log });
  const measured = meter.summary(true)!;
  const summary = run.summary?.start ? { ...measured, start: run.summary.start } : measured;
  const frames = { length: meter.frames };
  const verdict = judged.byThresholds
    ? decideOutcome({ abort: null, runError: null, shards: [], thresholds: summary.thresholds, capacity: summary.capacity })
    : { status: run.status, reason: run.reason };
  const restated = await restateRun(db, runId, run.status, { status: verdict.status, reason: verdict.reason, summary });
  await redis.hset(runStateKey(runId), JUDGED_FIELD, JSON.stringify({ ...judged, frames: frames.length } satisfies JudgedRun));
  if (!restated) return false;
  await meter.saveFinal(summary);
  const outcomeMoved = verdict.status !== run.status || verdict.reason !== run.reason;
  if (outcomeMoved) await events.status(runId, verdict.status, verdict.reason);
  if (outcomeMoved || JSON.stringify(summary) !== JSON.stringify(run.summary)) {
    const late = frames.length - judged.frames;
    await webhooks.runFinished(runId, {
      previous: { status: run.status, reason: run.reason },
      why: `measurements stored after the run ended (${late} late frame${late === 1 ? "" : "s"}) changed its ${outcomeMoved ? "outcome" : "summary"}`,
      key: String(frames.length),
    });
  }
  log.warn(
    { runId, judgedOn: judged.frames, frames: frames.length, status: verdict.status, was: run.status },
    `run restated: ${frames.length - judged.frames} frame(s) were stored after it was finalized on ${judged.frames}`,
  );
  return true;
}
