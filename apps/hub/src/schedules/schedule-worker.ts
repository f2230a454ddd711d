import { Worker, type Job, type Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { AdmissionRefusal, admitPlan, type TargetPolicy } from "@volley/admission";
import { runNotQueuedReason } from "@volley/contracts";
import { finishRun, getPlan, getScheduleOfAnyOrg, insertRun, recordAudit, recordScheduleFiring, type Db } from "@volley/db";
import { enqueue, openQueue, QUEUE_NAMES, removePlanScheduler, runJob, scheduledRunJob } from "@volley/queue";
import { errorMessage } from "../util/wait";

/**
 * The BullMQ worker of the schedules queue (handler of `scheduledRunJob`): each firing of a plan's
 * job scheduler starts the plan's latest version as a run, as `POST /api/v1/runs {"planId"}` would,
 * and records the run (or why there is none) on the schedule. A schedule deleted or disabled since
 * the firing was queued starts nothing. The plan is admitted now exactly as web admits a run it
 * queues (@volley/admission: target policy; hosted, the quotas with the runs going now and every
 * host's ownership proof re-checked): saving the schedule checked them once, but hours later the
 * org may be busy, its quotas lowered, its proof gone.
 */
export class ScheduleWorker {
  private readonly worker: Worker;

  constructor(private readonly deps: { db: Db; connection: Redis; runs: Queue; schedules: Queue; log: Logger; policy: TargetPolicy }) {
    this.worker = new Worker(QUEUE_NAMES.schedules, (job) => this.fire(job), { connection: deps.connection, concurrency: 4, autorun: false });
    this.worker.on("error", (err) => deps.log.error({ err: errorMessage(err) }, "schedule worker error"));
  }

  start(): void {
    void this.worker.run().catch((err) => this.deps.log.error({ err: errorMessage(err) }, "schedule worker stopped"));
  }

  private async fire(job: Job): Promise<string | null> {
    const { db, log } = this.deps;
    const { scheduleId, planId, orgId } = scheduledRunJob.schema.parse(job.data);
    const schedule = await getScheduleOfAnyOrg(db, scheduleId);
    if (!schedule?.enabled || schedule.planId !== planId || schedule.orgId !== orgId) {
      // Its job scheduler outlived the row (web removes both; a crash between the two leaves this).
      await removePlanScheduler(this.deps.schedules, planId);
      log.info({ scheduleId, planId }, "schedule gone or disabled; its job scheduler removed");
      return null;
    }
    const plan = await getPlan(db, planId, orgId);
    if (!plan) {
      await recordScheduleFiring(db, scheduleId, { error: `plan ${planId} no longer exists` });
      return null;
    }
    let admitted: { host: string; addresses: string[] };
    try {
      admitted = await admitPlan(db, orgId, plan.document, this.deps.policy);
    } catch (err) {
      if (!(err instanceof AdmissionRefusal)) throw err;
      // Shown on the plan's schedule as the last firing's outcome ("started no run: …").
      await recordScheduleFiring(db, scheduleId, { error: err.message });
      log.info({ scheduleId, planId, code: err.code, reason: err.message }, "scheduled run refused");
      return null;
    }
    // The saved plan's stored form, its credentials still sealed, is the run's (a row from before sealing is sealed now).
    const stored = plan.secrets === null ? { plan: plan.document } : { plan: plan.document, secrets: plan.secrets };
    const run = await insertRun(db, { ...stored, orgId, planId, planVersion: plan.version, scheduleId });
    await recordAudit(db, {
      orgId,
      actor: `schedule:${scheduleId}`,
      action: "run.scheduled",
      runId: run.id,
      targetHost: admitted.host,
      addresses: admitted.addresses,
    });
    try {
      await enqueue(this.deps.runs, runJob, { runId: run.id }, { jobId: run.id });
    } catch (err) {
      // The driver's text goes to the log; the schedule shows what happened and what to do (as web's runs do).
      log.error({ scheduleId, planId, runId: run.id, err: errorMessage(err) }, "scheduled run could not be queued");
      const reason = runNotQueuedReason("start the plan by hand or wait for the schedule's next firing");
      // No job will ever run it: the row must not sit in `queued` (web ends its own such runs the same way).
      await finishRun(db, run.id, { status: "errored", reason });
      await recordScheduleFiring(db, scheduleId, { error: `run ${run.id} ${reason}` });
      throw err;
    }
    await recordScheduleFiring(db, scheduleId, { runId: run.id });
    log.info({ scheduleId, planId, runId: run.id }, "scheduled run queued");
    return run.id;
  }

  close(force = false): Promise<void> {
    return this.worker.close(force);
  }
}

/** The schedule worker with its own queue handles on `connection`, started; close() stops it and them. */
export function startScheduleWorker(deps: { db: Db; connection: Redis; log: Logger; policy: TargetPolicy }): {
  close(force?: boolean): Promise<void>;
} {
  const runs = openQueue(QUEUE_NAMES.runs, deps.connection);
  const schedules = openQueue(QUEUE_NAMES.schedules, deps.connection);
  const worker = new ScheduleWorker({ ...deps, runs, schedules });
  worker.start();
  return {
    async close(force = false) {
      await worker.close(force);
      await Promise.all([runs.close(), schedules.close()]);
    },
  };
}
