import type { Logger } from "pino";
import { AGENT_EVENTS, ackSchema, planTiming, type Ack, type ShardEnd, type ShardJob, type ShardRate } from "@volley/contracts";
import { listShards, openPlan, updateShard, type Db, type SecretKeys } from "@volley/db";
import type { EndedShard, RunCoordinator } from "../coordination/run-coordinator";
import { describeAgent, type AgentRegistry, type AgentSession, type ShardLease } from "../gateway/agent-registry";
import { deferred, errorMessage, seconds, sleep, whileDatabaseDown, type Deferred } from "../util/wait";

export interface ShardRunnerOptions {
  db: Db;
  registry: AgentRegistry;
  coordinator: RunCoordinator;
  log: Logger;
  /** How long an agent may take to arm (and the run worker to publish the start instant). */
  armTimeoutMs: number;
  /** How long an agent told to abort may take to send its last frames and shard.end. */
  abortEndTimeoutMs: number;
  /** Margin past the plan's own end (plan-timing endByMs) before a shard that has not ended is stopped. */
  endSlackMs: number;
  /** How long a shard's outcome waits for PostgreSQL to answer again (the shard stays held meanwhile). */
  recordWaitMs: number;
  /** The keys plans' target credentials are sealed with (VOLLEY_SECRETS_KEY[_OLD]); null: stored unencrypted. */
  secretsKeys?: SecretKeys | null;
}

/** Thrown (failing the BullMQ job) when a shard ends errored; the message is the shard's error. */
export class ShardFailed extends Error {
  override name = "ShardFailed";
}

interface Execution {
  job: ShardJob;
  session: AgentSession;
  abort: Deferred<string>;
  /**
   * shard.assign has been emitted. An abort before that must not let the assign go out afterwards
   * (the agent would arm a shard nobody supervises and refuse every later one as "busy"), and needs
   * no shard.abort: the agent never had the shard.
   */
  assigned: boolean;
}

/** While an aborted shard has not ended, shard.abort is repeated this often (idempotent on the agent). */
const ABORT_RESEND_MS = 1000;

type Interrupt = { t: "lost"; reason: string } | { t: "ended"; end: ShardEnd } | { t: "abort"; reason: string };

/**
 * Runs one shard job on one agent of this hub: assign (ack = armed), report armed to the run's
 * coordinator, wait for the one start instant, forward it, and hold on until the agent's
 * shard.end. Any phase can be cut short by the agent being lost, the agent ending early, or an
 * abort/cancel for the run; every wait is bounded.
 */
export class ShardRunner {
  private readonly active = new Map<string, Execution>();

  constructor(private readonly opts: ShardRunnerOptions) {}

  /** Forwards shard.abort to the agents of this hub running shards of `runId` (user abort or cancel). */
  abortRun(runId: string, reason: string): void {
    for (const exec of this.active.values()) if (exec.job.runId === runId) this.abortExecution(exec, reason);
  }

  /** Forwards a live rate or connections change to the agents of this hub running shards of `runId`; returns how many shards it reached. */
  rateRun(runId: string, change: Omit<ShardRate, "shardId">): number {
    let n = 0;
    for (const exec of this.active.values()) {
      if (exec.job.runId !== runId || !exec.assigned || exec.abort.settled) continue;
      this.opts.registry.send(exec.session, AGENT_EVENTS.shardRate, { shardId: exec.job.shardId, ...change } satisfies ShardRate);
      n++;
    }
    return n;
  }

  abortAll(reason: string): void {
    for (const exec of this.active.values()) this.abortExecution(exec, reason);
  }

  activeCount(): number {
    return this.active.size;
  }

  private abortExecution(exec: Execution, reason: string): void {
    if (exec.abort.settled) return;
    if (exec.assigned) this.opts.registry.send(exec.session, AGENT_EVENTS.shardAbort, { shardId: exec.job.shardId, reason });
    exec.abort.resolve(reason);
  }

  async run(job: ShardJob, session: AgentSession): Promise<EndedShard> {
    const { registry, coordinator, db, log } = this.opts;
    const exec: Execution = { job, session, abort: deferred(), assigned: false };
    const who = describeAgent(session);
    const state = await coordinator.getState(job.runId);
    const taken = state.armed.has(job.shardId) || state.ended.has(job.shardId) ? "shard was already run by another agent" : null;
    const stale = state.abort ?? state.cancel ?? (state.finalized ? `run already ${state.finalized}` : taken);
    if (stale) {
      // The run stopped while this job waited in the queue: never hand it to an agent.
      registry.release(session);
      // A shard another agent already ran keeps the row its holder wrote.
      if (!taken) await updateShard(db, job.shardId, { status: "aborted", error: stale, endedAt: new Date() });
      return { status: "aborted", error: stale, frames: 0, agentId: null, agentName: null };
    }

    const lease = registry.lease(session, job.runId, job.shardId);
    this.active.set(job.shardId, exec);
    const held = coordinator.holdShard(job.shardId);
    const stop = new AbortController();
    try {
      await updateShard(db, job.shardId, { status: "assigned", agentId: session.agentId });
      log.info({ runId: job.runId, shardId: job.shardId, agentId: session.agentId }, "shard assigned");
      const ended = await this.record(job, await this.drive(exec, lease, who, stop.signal));
      if (ended.status === "errored") throw new ShardFailed(ended.error ?? "shard errored");
      return ended;
    } finally {
      stop.abort();
      held.stop();
      this.active.delete(job.shardId);
      registry.release(session);
    }
  }

  /**
   * Takes over a shard an agent was already running when it connected to this hub (the hub that
   * assigned it restarted; its BullMQ job is failed as stalled, never handed out again): supervise
   * it to its shard.end like any other. A shard that is not this agent's, already ended, or whose
   * run never started or is being stopped is stood down instead, so no load goes on unsupervised.
   */
  async adopt(session: AgentSession): Promise<void> {
    const { registry, coordinator, db, log } = this.opts;
    const lease = session.lease;
    if (!lease) return;
    const { runId, shardId } = lease;
    const who = describeAgent(session);
    const stop = new AbortController();
    let held: { stop(): void } | undefined;
    try {
      const row = (await listShards(db, runId)).find((s) => s.id === shardId);
      const state = await coordinator.getState(runId);
      const notOurs = !row
        ? "no such shard"
        : row.agentId !== session.agentId
          ? "the shard is assigned to another agent"
          : state.ended.has(shardId)
            ? "the shard has already ended"
            : null;
      if (!row || notOurs) {
        log.warn({ runId, shardId, agentId: session.agentId, why: notOurs }, "not adopting a shard; telling the agent to stop it");
        registry.send(session, AGENT_EVENTS.shardAbort, { shardId, reason: `shard not resumed by the restarted hub: ${notOurs}` });
        await Promise.race([lease.ended.promise, lease.lost.promise, sleep(this.opts.abortEndTimeoutMs, stop.signal)]);
        return;
      }
      const exec: Execution = { job: { runId, shardId, index: row.index, count: row.count, plan: row.plan }, session, abort: deferred(), assigned: true };
      this.active.set(shardId, exec);
      held = coordinator.holdShard(shardId);
      log.info({ runId, shardId, agentId: session.agentId }, "adopted a running shard from a hub that stopped");
      const stopped =
        state.abort ??
        state.cancel ??
        (state.finalized ? `run already ${state.finalized}` : null) ??
        (state.startAt === null ? "the hub that armed this shard stopped before the run started" : null);
      if (stopped) this.abortExecution(exec, stopped);
      const ended = stopped ? await this.afterAbort(exec, lease, who, stopped) : await this.awaitEnd(exec, lease, who, state.startAt!, stop.signal);
      await this.record(exec.job, ended);
    } catch (err) {
      log.error({ runId, shardId, err: errorMessage(err) }, "could not adopt shard");
    } finally {
      stop.abort();
      held?.stop();
      if (this.active.get(shardId)?.session === session) this.active.delete(shardId);
      registry.release(session);
    }
  }

  /** The shard's outcome on its row and in the run's coordination state. */
  private async record(job: ShardJob, ended: EndedShard): Promise<EndedShard> {
    // Held while PostgreSQL is away: released unrecorded, the shard would look orphaned to the run's
    // watch and end "lost" (its hub "stopped") though every frame was stored and the agent finished.
    const moved = await whileDatabaseDown(
      () =>
        updateShard(this.opts.db, job.shardId, {
          status: ended.status,
          error: ended.error,
          ...(ended.frames !== null ? { frames: ended.frames } : {}),
          endedAt: new Date(),
        }),
      {
        maxMs: this.opts.recordWaitMs,
        onWait: (err) =>
          this.opts.log.warn(
            { runId: job.runId, shardId: job.shardId, err: errorMessage(err) },
            "PostgreSQL unreachable; recording the shard's end when it answers",
          ),
      },
    );
    // The shard lifecycle keeps the first end written (say, the orphan watch's on another replica).
    if (!moved) this.opts.log.info({ runId: job.runId, shardId: job.shardId, status: ended.status }, "shard row already ended; its first end stays");
    await this.opts.coordinator.markEnded(job.runId, job.shardId, ended);
    this.opts.log.info({ runId: job.runId, shardId: job.shardId, status: ended.status, frames: ended.frames, error: ended.error }, "shard ended");
    return ended;
  }

  private async drive(exec: Execution, lease: ShardLease, who: string, signal: AbortSignal): Promise<EndedShard> {
    const { registry, coordinator, armTimeoutMs } = this.opts;
    const { job, session } = exec;
    const base = { agentId: session.agentId, agentName: session.name };
    const interrupts = this.interrupts(exec, lease);
    const fromInterrupt = (i: Interrupt) => this.fromInterrupt(exec, lease, who, i);

    // 1. Arm: the assign ack says the agent is armed, or why not. Aborted already (while the shard
    //    row was written): the agent never hears of the shard.
    if (exec.abort.settled) return fromInterrupt(await interrupts);
    const armed = await Promise.race([this.assign(exec, who), interrupts]);
    if ("t" in armed) return fromInterrupt(armed);
    if (!armed.ok) return { ...base, status: "errored", error: armed.error, frames: 0 };
    lease.confirmed = true;
    await coordinator.markArmed(job.runId, job.shardId, { agentId: session.agentId, agentName: session.name, at: Date.now() });

    // 2. The one start instant, published by the run worker once every shard is armed.
    const started = await Promise.race([
      coordinator.waitFor(job.runId, (s) => s.startAt ?? ((s.cancel ?? s.abort) ? -1 : undefined), { timeoutMs: armTimeoutMs + 10_000, signal }),
      interrupts,
    ]);
    if (typeof started === "object") return fromInterrupt(started);
    if (started === undefined || started < 0) {
      // Cancelled (or the run worker vanished): stand the armed agent down.
      const s = await coordinator.getState(job.runId);
      this.abortExecution(exec, s.abort ?? s.cancel ?? "the run did not start");
      return fromInterrupt(await interrupts);
    }
    registry.send(session, AGENT_EVENTS.shardStart, { shardId: job.shardId, startAt: started });
    await updateShard(this.opts.db, job.shardId, { status: "running", startedAt: new Date(started) });
    return this.awaitEnd(exec, lease, who, started, signal);
  }

  /** 3. Run until shard.end, bounded by the plan's own length (from the start instant) plus generous margins. */
  private async awaitEnd(exec: Execution, lease: ShardLease, who: string, startAt: number, signal: AbortSignal): Promise<EndedShard> {
    const interrupts = this.interrupts(exec, lease);
    const plan = exec.job.plan;
    const runMs = startAt - Date.now() + planTiming(plan).endByMs + this.opts.endSlackMs;
    const overdue = sleep(runMs, signal).then((): Interrupt => ({ t: "abort", reason: `shard did not end within ${seconds(runMs)} of its start` }));
    const outcome = await Promise.race([interrupts, overdue]);
    if (outcome.t === "abort" && !exec.abort.settled) {
      this.abortExecution(exec, outcome.reason);
      const after = await this.afterAbort(exec, lease, who, outcome.reason);
      // An agent that overran its plan is an error, not a user abort.
      return after.status === "aborted" ? { ...after, status: "errored", error: `${who}: ${outcome.reason}` } : after;
    }
    return this.fromInterrupt(exec, lease, who, outcome);
  }

  /** Whatever cuts a shard short: its agent lost, its own shard.end, or an abort for the run. */
  private interrupts(exec: Execution, lease: ShardLease): Promise<Interrupt> {
    return Promise.race([
      lease.lost.promise.then((reason): Interrupt => ({ t: "lost", reason })),
      lease.ended.promise.then((end): Interrupt => ({ t: "ended", end })),
      exec.abort.promise.then((reason): Interrupt => ({ t: "abort", reason })),
    ]);
  }

  private fromInterrupt(exec: Execution, lease: ShardLease, who: string, i: Interrupt): Promise<EndedShard> | EndedShard {
    const base = { agentId: exec.session.agentId, agentName: exec.session.name };
    if (i.t === "lost") return { ...base, status: "errored", error: `${who} lost: ${i.reason}`, frames: null, lost: true };
    if (i.t === "ended") return { ...base, status: i.end.status, error: i.end.error ?? null, frames: i.end.frames };
    // Never assigned: nothing runs on the agent, so nothing to wait for.
    if (!exec.assigned) return { ...base, status: "aborted", error: i.reason, frames: 0 };
    return this.afterAbort(exec, lease, who, i.reason);
  }

  private async assign(exec: Execution, who: string): Promise<Ack> {
    const { session, job } = exec;
    const socket = session.socket;
    if (!socket) return { ok: false, error: `${who} disconnected before the shard was assigned` };
    // Set in the same turn as the emit: an abort from here on is sent after the assign, in order.
    exec.assigned = true;
    try {
      // The job carries the plan's credentials sealed; the agent gets the plan it is to run, with them.
      const { secrets, ...rest } = job;
      const assigned: ShardJob = {
        ...rest,
        plan: openPlan({ document: job.plan, source: null, secrets: secrets ?? null }, this.opts.secretsKeys ?? null).plan,
      };
      const reply: unknown = await socket.timeout(this.opts.armTimeoutMs).emitWithAck(AGENT_EVENTS.shardAssign, assigned);
      const ack = ackSchema.safeParse(reply);
      return ack.success ? ack.data : { ok: false, error: `${who} sent an invalid reply to shard.assign` };
    } catch (err) {
      return { ok: false, error: `${who} did not confirm arming within ${seconds(this.opts.armTimeoutMs)} (${errorMessage(err)})` };
    }
  }

  /**
   * After shard.abort: the agent's own shard.end (with its frame count), or a bounded wait. The
   * abort is repeated until then, so one lost on the way (a reconnect, an agent busy arming) still
   * stops the agent promptly; agents treat a repeated abort as a no-op.
   */
  private async afterAbort(exec: Execution, lease: ShardLease, who: string, reason: string): Promise<EndedShard> {
    const base = { agentId: exec.session.agentId, agentName: exec.session.name };
    const giveUp = new AbortController();
    const timeout = sleep(this.opts.abortEndTimeoutMs, giveUp.signal).then(() => null);
    const resend = setInterval(() => {
      // While disconnected, the first abort already waits in the session's outbox.
      if (exec.session.socket?.connected) this.opts.registry.send(exec.session, AGENT_EVENTS.shardAbort, { shardId: exec.job.shardId, reason });
    }, ABORT_RESEND_MS);
    const r = await Promise.race([lease.ended.promise, lease.lost.promise.then((why) => ({ lost: why })), timeout]).finally(() => {
      clearInterval(resend);
      giveUp.abort();
    });
    if (r === null) {
      this.opts.log.warn({ shardId: exec.job.shardId, agentId: base.agentId }, "agent did not end its shard after abort");
      return { ...base, status: "aborted", error: reason, frames: null };
    }
    if ("lost" in r) return { ...base, status: "errored", error: `${who} lost: ${r.lost}`, frames: null, lost: true };
    return { ...base, status: r.status, error: r.error ?? (r.status === "aborted" ? reason : null), frames: r.frames };
  }
}
