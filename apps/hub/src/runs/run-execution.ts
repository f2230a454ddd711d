import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { planTiming, type Plan } from "@volley/contracts";
import {
  countFramesByShard,
  effectiveAgentStatus,
  finishRun,
  getRunOfAnyOrg,
  insertShards,
  listAgents,
  listShards,
  markRunRunning,
  openPlan,
  updateShard,
  type Db,
  type RunRow,
  type SecretKeys,
  type ShardRow,
} from "@volley/db";
import { enqueue, shardJob } from "@volley/queue";
import { streamBacklog } from "../aggregator/stream-backlog";
import type { RunCoordinator, RunState } from "../coordination/run-coordinator";
import { poolKey } from "../shards/pool-key";
import type { ShardQueues } from "../shards/shard-queues";
import { errorMessage, seconds, sleep, whileDatabaseDown } from "../util/wait";
import { databaseFailure } from "@volley/db";
import { decideOutcome, lossStopReason, startReport, startSkewMs } from "./run-outcome";
import type { RunEvents } from "./run-events";
import { selectAgents, type AgentSelection } from "./agent-selection";
import type { Admission, AgentLine, Reservation } from "./agent-line";
import { planShards } from "./shard-planner";
import { watchOrphanedShards } from "./orphan-watch";
import { abortOnFailThresholds, ThresholdWatch } from "./threshold-watch";
import { RunMeter } from "./run-meter";

export interface RunTiming {
  /** Every shard must be armed within this, or the run errors. */
  armTimeoutMs: number;
  /** The start instant is this far ahead of "all armed", so every agent hears of it in time. */
  startLeadMs: number;
  /** After the last shard.end, how long the wait for the aggregator to store the frames may see no progress. */
  storeWaitMs: number;
  /** Bound on that wait while the backlog is still draining (progress resets storeWaitMs, never this). */
  storeDeadlineMs: number;
  /** After a cancel, how long armed agents get to stand down before the run is finalized anyway. */
  abortEndTimeoutMs: number;
  /** How often a running run's abortOnFail thresholds are judged on the frames stored so far. */
  thresholdCheckMs: number;
  /** How often the run's meter reads frames stored by any replica (this hub's own stores nudge it sooner); default 1 s. */
  meterPollMs?: number;
  /** How long an agent may be gone before it counts as lost (also: a shard no live hub holds). */
  agentGraceMs: number;
  /** How often a started run looks for shards no live hub holds (their hub died). */
  orphanCheckMs: number;
  /** Margin past the plan's own end (plan-timing endByMs) before shards that have not ended are stopped. */
  endSlackMs: number;
}

export interface RunExecutionDeps {
  db: Db;
  redis: Redis;
  coordinator: RunCoordinator;
  events: RunEvents;
  queues: ShardQueues;
  log: Logger;
  timing: RunTiming;
  /** Told once a run has its final status (webhooks). */
  webhooks: { runFinished(runId: string): Promise<void> };
  /** The pools' waiting lines; without it (older callers) a run takes the agents idle when it starts. */
  line?: AgentLine;
  /** The meters of the runs this hub supervises, by run id: the aggregator nudges a run's meter when it stored frames of it. */
  meters?: Map<string, RunMeter>;
  /** The keys plans' target credentials are sealed with (VOLLEY_SECRETS_KEY[_OLD]); null: stored unencrypted. */
  secretsKeys?: SecretKeys | null;
}

/** The longest a run may take from start to its last shard.end, from the plan (stages and sweeps included). */
export function runLengthMs(plan: Plan): number {
  return planTiming(plan).endByMs;
}

/** The run job's hard deadline: arming + the plan's length + every wait after it, with margin. */
export function runDeadlineMs(plan: Plan, t: RunTiming): number {
  return t.armTimeoutMs + t.startLeadMs + runLengthMs(plan) + t.endSlackMs + t.abortEndTimeoutMs + Math.max(t.storeWaitMs, t.storeDeadlineMs) + 30_000;
}

/**
 * One run, start to finish, on the hub that took its job: plan and enqueue shards, wait for all
 * of them to arm (through Redis: shards may be held by other replicas), publish one start
 * instant, wait for every shard to end and every reported frame to be stored, then finalize.
 */
export class RunExecution {
  private shards: ShardRow[] = [];
  private plan: Plan | null = null;
  private orgId: string | null = null;
  private started = false;
  /** Set when an abortOnFail threshold broke mid-run: the reason, and the verdict is `failed`. */
  private thresholdStop: string | null = null;
  /** The run's one meter (runs/run-meter.ts): live points, running summary, threshold checks and the final summary read it. */
  private meter: RunMeter | null = null;
  private following: Promise<void> | null = null;
  private readonly stopFollowing = new AbortController();
  /** The agents the pool's line gave this run (waitForAgents), held until it is finalized. */
  private admitted: { selection: Extract<AgentSelection, { ok: true }>; reservation: Reservation } | null = null;

  constructor(
    private readonly runId: string,
    private readonly deps: RunExecutionDeps,
  ) {}

  /**
   * Waits in the pool's line (runs/agent-line.ts) until the run's agents are free and reserved for it.
   * "go": execute; "done": the run ended while waiting (aborted, or refused here with the reason);
   * "stopping": `signal` fired, the run still waits and its job must go back to the queue.
   */
  async waitForAgents(run: RunRow, signal: AbortSignal): Promise<"go" | "done" | "stopping"> {
    const line = this.deps.line;
    if (!line) return "go";
    const admission: Admission = await line.admit(run, { connectGraceMs: this.deps.timing.armTimeoutMs, signal });
    if (admission.kind === "admitted") {
      this.admitted = admission;
      return "go";
    }
    if (admission.kind === "stopping") return "stopping";
    if (admission.kind === "refused") await this.refuse(admission.reason);
    return "done";
  }

  /** A run that never got its agents: errored from the queue, with the reason. */
  private async refuse(reason: string): Promise<void> {
    const { db, events, coordinator, log } = this.deps;
    if (await finishRun(db, this.runId, { status: "errored", reason })) {
      await events.status(this.runId, "errored", reason);
      await this.deps.webhooks.runFinished(this.runId);
    }
    await coordinator.markFinalized(this.runId, "errored");
    log.warn({ runId: this.runId, reason }, "run errored while waiting for agents");
  }

  /** Stops the run's meter (idempotent): it follows the run only while this hub supervises it, whatever way the job ends. */
  releaseMeter(): void {
    this.stopFollowing.abort();
    if (this.meter && this.deps.meters?.get(this.runId) === this.meter) this.deps.meters.delete(this.runId);
  }

  /** Gives the reserved agents back to the pool's line (idempotent). */
  async releaseAgents(): Promise<void> {
    await this.admitted?.reservation.release();
  }

  /** `recovered`: BullMQ handed us a job whose previous holder stopped renewing its lock (a hub crashed). */
  async execute(recovered = false): Promise<void> {
    const { db, log, coordinator, events, timing } = this.deps;
    const runId = this.runId;
    const run = await getRunOfAnyOrg(db, runId);
    if (!run) return void log.warn({ runId }, "run job for an unknown run; skipped");
    if (!(await markRunRunning(db, runId))) {
      if (recovered && run.status === "running") {
        this.plan = run.plan;
        this.orgId = run.orgId;
        this.shards = await listShards(db, runId);
        // Taking the run over: the meter is rebuilt from every frame stored so far.
        this.useMeter(await RunMeter.replay(this.meterOptions()));
        const state = await coordinator.getState(runId);
        this.started = state.startAt !== null;
        if (state.startAt !== null && !state.abort && !state.cancel) {
          // Started: its agents carry on by themselves and re-attach to a live hub, which adopts
          // their shards; supervising the rest of the run from here loses nothing.
          log.info({ runId, startAt: state.startAt }, "resuming a run whose hub stopped");
          return this.supervise(run.plan, state.startAt);
        }
        // Stopped while arming: nothing was measured yet, and the shards' agents are stood down.
        return this.standDown(
          "the hub orchestrating this run stopped before the run started (its job stalled); the run was ended rather than left unsupervised",
        );
      }
      return void log.info({ runId, status: run.status }, "run is no longer queued; skipped");
    }
    this.plan = run.plan;
    this.orgId = run.orgId;
    this.useMeter(new RunMeter(this.meterOptions()));
    await events.status(runId, "running");
    log.info({ runId, name: run.name }, "run started");

    // An abort that arrived while the job was queued (markRunRunning won the race against it).
    const early = await coordinator.getState(runId);
    if (early.abort) return this.finalize(null);

    const selection = await this.selectAgents(run.plan);
    if (!selection.ok) return this.finalize(selection.reason);
    // The run's plan holds its credentials redacted; the shards are cut from the real one and sealed again.
    const keys = this.deps.secretsKeys ?? null;
    const plans = planShards(
      openPlan({ document: run.plan, source: null, secrets: run.secrets }, keys).plan,
      selection.slots.map((s) => s.weight),
    );
    this.shards = await insertShards(db, runId, plans, keys);
    const queue = this.deps.queues.get(poolKey(run.orgId, run.plan.agents.pool));
    for (const s of this.shards) {
      // The agent this shard was sized for; the pool dispatcher hands it there while it is idle.
      const agentId = selection.slots[s.index]?.agentId ?? null;
      await enqueue(queue, shardJob, { runId, shardId: s.id, index: s.index, count: s.count, plan: s.plan, secrets: s.secrets, agentId }, { jobId: s.id });
    }
    log.info(
      { runId, shards: this.shards.map((s) => ({ connections: s.plan.connections.count, agentId: selection.slots[s.index]?.agentId ?? null })) },
      "run planned",
    );

    const arming = await coordinator.waitFor(
      runId,
      (s) => {
        if (s.abort) return "abort" as const;
        if (this.shards.some((sh) => s.ended.get(sh.id))) return "shard-ended" as const;
        if (this.shards.every((sh) => s.armed.has(sh.id))) return "armed" as const;
        return undefined;
      },
      { timeoutMs: timing.armTimeoutMs },
    );
    if (arming !== "armed") {
      const reason = arming === undefined ? await this.armingTimeoutReason() : null;
      return this.standDown(reason);
    }

    const startAt = Date.now() + timing.startLeadMs;
    await coordinator.publishStart(runId, startAt);
    this.started = true;
    log.info({ runId, startAt, shards: this.shards.length }, "run start published");
    return this.supervise(run.plan, startAt);
  }

  private meterOptions() {
    const { db, log } = this.deps;
    return { db, log, runId: this.runId, plan: this.plan, onPoints: this.deps.events.points };
  }

  private useMeter(meter: RunMeter): void {
    this.meter = meter;
    this.deps.meters?.set(this.runId, meter);
  }

  /** From the start instant on: wait for every shard to end (or a loss, abort or threshold breach), then finalize. */
  private async supervise(plan: Plan, startAt: number): Promise<void> {
    const { coordinator, log } = this.deps;
    this.following ??= this.meter?.follow(this.stopFollowing.signal, this.deps.timing.meterPollMs) ?? null;
    const runId = this.runId;
    const endBudgetMs = runLengthMs(plan) + this.deps.timing.endSlackMs;
    const endWithinMs = Math.max(0, startAt + endBudgetMs - Date.now());
    const onLoss = plan.agents.onLoss;
    const stopWaiting = new AbortController();
    const breach = this.watchThresholds(plan, startAt, stopWaiting);
    const { db, timing } = this.deps;
    const orphans = watchOrphanedShards({
      runId,
      shardIds: this.shards.map((sh) => sh.id),
      db,
      coordinator,
      log,
      graceMs: timing.agentGraceMs,
      checkEveryMs: timing.orphanCheckMs,
      signal: stopWaiting.signal,
    });
    const ending = await coordinator.waitFor(
      runId,
      (s) => {
        if (this.shards.every((sh) => s.ended.has(sh.id))) return { state: s };
        const lost = s.abort ? null : lossStopReason(this.outcomeShards(s), onLoss);
        return lost ? { lost } : undefined;
      },
      { timeoutMs: endWithinMs, signal: stopWaiting.signal },
    );
    stopWaiting.abort();
    await orphans;
    const broken = await breach;
    // Shards that all ended on their own are judged on everything they sent, breach or not.
    if (!ending && broken) {
      log.info({ runId, reason: broken }, "abortOnFail threshold broke; stopping the run");
      this.thresholdStop = broken;
      return this.standDown(null);
    }
    if (ending?.lost) {
      log.warn({ runId, reason: ending.lost }, "agent lost; stopping the run (agents.onLoss: error)");
      return this.standDown(ending.lost);
    }
    const ended = ending?.state;
    if (!ended) {
      const state = await coordinator.getState(runId);
      const late = this.shards.filter((sh) => !state.ended.has(sh.id)).map((sh) => `${sh.index + 1}/${sh.count}`);
      return this.standDown(`shard ${late.join(", ")} did not end within ${seconds(endBudgetMs)} of the start`);
    }
    await this.waitForStoredFrames(ended);
    return this.finalize(null);
  }

  /** The run's agents: those the line reserved for it, else the pool's idle agents of the run's org as the hubs last recorded them. */
  private async selectAgents(plan: Plan): Promise<AgentSelection> {
    if (this.admitted) return this.admitted.selection;
    const now = Date.now();
    const idle = (await listAgents(this.deps.db, this.orgId ?? undefined)).filter(
      (a) => a.pool === plan.agents.pool && effectiveAgentStatus(a, now) === "online",
    );
    return selectAgents(plan.agents.count, plan.agents.pool, idle, plan.connections.count);
  }

  /** Stops every shard (cancel reaches the agents through their hubs) and finalizes with `runError`. */
  async standDown(runError: string | null): Promise<void> {
    const { coordinator, timing, db, log } = this.deps;
    const state = await coordinator.getState(this.runId);
    const reason = state.abort ?? runError ?? this.thresholdStop ?? "cancelled";
    await coordinator.cancel(this.runId, reason);
    // Shards still waiting in the queue never reach an agent.
    const queue = this.plan && this.orgId ? this.deps.queues.get(poolKey(this.orgId, this.plan.agents.pool)) : null;
    for (const sh of this.shards) {
      if (state.ended.has(sh.id) || state.armed.has(sh.id)) continue;
      const removed = await queue?.remove(sh.id).catch(() => 0);
      if (removed) await updateShard(db, sh.id, { status: state.abort ? "aborted" : "errored", error: reason, endedAt: new Date() });
    }
    if (this.started) {
      // Agents that ran get a bounded moment to send their last frames and shard.end.
      await coordinator.waitFor(this.runId, (s) => (this.shards.every((sh) => s.ended.has(sh.id)) ? true : undefined), { timeoutMs: timing.abortEndTimeoutMs });
      await this.waitForStoredFrames(await coordinator.getState(this.runId));
    }
    log.info({ runId: this.runId, reason }, "run stood down");
    return this.finalize(runError);
  }

  /** Judges abortOnFail thresholds until `stop` aborts; on a breach, aborts `stop` itself and resolves with the reason. */
  private async watchThresholds(plan: Plan, startAt: number, stop: AbortController): Promise<string | null> {
    const watched = abortOnFailThresholds(plan);
    if (watched.length === 0) return null;
    const { log, timing } = this.deps;
    const watch = new ThresholdWatch(this.meter!, watched, startAt);
    const reason = await watch.watch(timing.thresholdCheckMs, stop.signal, (err) =>
      log.warn({ runId: this.runId, err: errorMessage(err) }, "could not check abortOnFail thresholds"),
    );
    if (reason) stop.abort();
    return reason;
  }

  private async armingTimeoutReason(): Promise<string> {
    const { coordinator, db, timing } = this.deps;
    const plan = this.plan!;
    const state = await coordinator.getState(this.runId);
    const unarmed = this.shards.filter((sh) => !state.armed.has(sh.id)).map((sh) => `${sh.index + 1}/${sh.count}`);
    const agents = (await listAgents(db, this.orgId ?? undefined)).filter((a) => a.pool === plan.agents.pool && a.status !== "offline").length;
    return `no agent in pool '${plan.agents.pool}' armed shard ${unarmed.join(", ")} within ${seconds(timing.armTimeoutMs)} (${agents} agent${agents === 1 ? "" : "s"} connected)`;
  }

  /**
   * Waits until the aggregator has stored every frame each agent reported and the run's stream is
   * drained. A backlog that is still draining (more frames stored, or fewer entries left in the
   * stream) is waited for up to `storeDeadlineMs`; a wait that sees no progress for `storeWaitMs`
   * gives up sooner. Frames that land after finalization make the aggregator restate the run.
   */
  private async waitForStoredFrames(state: RunState): Promise<void> {
    const { db, redis, log, timing } = this.deps;
    const began = Date.now();
    const deadline = began + Math.max(timing.storeWaitMs, timing.storeDeadlineMs);
    let lastProgress = began;
    let counts: Record<string, number> = {};
    let maxStored = -1;
    let minBacklog = Infinity;
    for (;;) {
      try {
        counts = await countFramesByShard(db, this.runId);
        const complete = this.shards.every((sh) => (counts[sh.id] ?? 0) >= (state.ended.get(sh.id)?.frames ?? 0));
        const backlog = await streamBacklog(redis, this.runId);
        if (complete && backlog === 0) return;
        const stored = Object.values(counts).reduce((a, b) => a + b, 0);
        if (stored > maxStored || (backlog !== null && backlog < minBacklog)) lastProgress = Date.now();
        maxStored = Math.max(maxStored, stored);
        if (backlog !== null) minBacklog = Math.min(minBacklog, backlog);
      } catch (err) {
        log.warn({ runId: this.runId, err: errorMessage(err) }, "could not check stored frames");
        // PostgreSQL away is not the backlog standing still: the aggregator stores nothing
        // meanwhile either, so finalizing now would judge the run on a part of its frames.
        if (databaseFailure(err) === "lost") lastProgress = Date.now();
      }
      const now = Date.now();
      if (now >= deadline || now - lastProgress >= timing.storeWaitMs) break;
      await sleep(100);
    }
    const why = Date.now() >= deadline ? `still draining after ${seconds(Date.now() - began)}` : `no progress for ${seconds(timing.storeWaitMs)}`;
    log.warn(
      { runId: this.runId, stored: counts, backlog: Number.isFinite(minBacklog) ? minBacklog : null },
      `frames not all stored (${why}); finalizing with what is stored, and restating the run when the rest lands`,
    );
  }

  private outcomeShards(state: RunState) {
    return this.shards.map((sh) => ({ index: sh.index, count: sh.count, ended: state.ended.get(sh.id) }));
  }

  /** Summary, thresholds and the final status, written once; then the aggregator may let the run go. */
  async finalize(runError: string | null): Promise<void> {
    const { db, coordinator, events, log, timing } = this.deps;
    const runId = this.runId;
    // Each write of the run's end waits out PostgreSQL being away (a restart, a failover): the
    // agents finished and every frame is stored, so a blink here must not make the run `errored`.
    let waited = false;
    const stored = <T>(op: () => Promise<T>) =>
      whileDatabaseDown(op, {
        maxMs: timing.storeDeadlineMs,
        onWait: (err) => {
          if (!waited) log.warn({ runId, err: errorMessage(err) }, "PostgreSQL unreachable while finalizing; finishing the run when it answers");
          waited = true;
        },
      });
    // Every shard has ended or been stood down: the next run in the line may have the agents.
    await this.releaseAgents();
    const state = await coordinator.getState(runId);
    // The meter's last read: frames stored since its last poll, and any its cursor passed over.
    this.stopFollowing.abort();
    await this.following;
    const meter = this.meter ?? new RunMeter(this.meterOptions());
    await stored(() => meter.poll());
    await stored(() => meter.reconcile());
    const measured = this.started || meter.frames > 0 ? meter.summary(true) : null;
    const start = startReport(this.shards, state.started);
    const summary = measured && start ? { ...measured, start } : measured;
    const thresholds = summary?.thresholds ?? [];
    const outcome = decideOutcome({
      abort: state.abort,
      runError,
      shards: this.outcomeShards(state),
      thresholds,
      onLoss: this.plan?.agents.onLoss,
      thresholdStop: this.thresholdStop,
      capacity: summary?.capacity,
    });
    // The agents' own start reports; runs whose agents did not report fall back to the frames' interval starts.
    const firstIntervals = [...meter.tally.firstIntervalStarts()].map(([shardId, startedAt]) => ({ shardId, index: 0, startedAt }));
    const startSkew = start && start.skewMs !== null ? start.skewMs : startSkewMs(firstIntervals);
    const changed = await stored(() => finishRun(db, runId, { ...outcome, summary, startSkewMs: startSkew, startLateMs: start?.maxLateMs ?? null }));
    if (changed) await stored(() => meter.saveFinal(summary));
    this.deps.meters?.delete(runId);
    if (changed) {
      await events.status(runId, outcome.status, outcome.reason);
      await stored(() => this.deps.webhooks.runFinished(runId));
    }
    // A status the measurements decided may change with frames stored after this; one an abort, error or lost agent decided may not.
    const byThresholds = outcome.status === "passed" || outcome.status === "inconclusive" || (outcome.status === "failed" && !this.thresholdStop);
    await coordinator.markFinalized(runId, outcome.status, changed ? { frames: meter.frames, byThresholds } : undefined);
    log.info({ runId, status: outcome.status, reason: outcome.reason, frames: meter.frames }, "run finished");
  }
}
