import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { durationMs, type Plan } from "@volley/contracts";
import { effectiveAgentStatus, getRunOfAnyOrg, listAgents, type Db, type RunRow } from "@volley/db";
import type { RunCoordinator } from "../coordination/run-coordinator";
import { poolKey } from "../shards/pool-key";
import { errorMessage, seconds, sleep } from "../util/wait";
import { selectAgents, type AgentSelection, type IdleAgent } from "./agent-selection";

/**
 * The waiting line of a pool's runs, and the agents each admitted run holds.
 *
 * A run waits here, before it plans any shard, until it is first in its pool's line and enough of
 * the pool's agents are free; then it reserves them and leaves the line. So runs beyond the agents
 * there are wait, in order, for as long as it takes (or the plan's `agents.maxWait`), and never fail
 * because agents are busy; only a pool that lacks the agents altogether (fewer connected than the
 * plan asks for, for longer than `connectGraceMs`) errors the run.
 *
 * Across hub replicas, in Redis: a sorted set per pool (score: the run's creation time, so first
 * come first served, as web's queue position counts), an "alive" mark per waiting run (a line
 * member whose hub died is passed over until BullMQ hands its job to a live hub, which puts it back
 * in its place), and a reservation per agent (the run holding it; refreshed while the run goes on,
 * lapsing on its own if its hub dies). "Free" = connected, not busy as the hubs recorded it, and
 * reserved by no run.
 */
export const lineKey = (pool: string) => `volley:pool:${pool}:line`;
const aliveKey = (runId: string) => `volley:line:${runId}:alive`;
export const reservedKey = (agentId: string) => `volley:agent:${agentId}:reserved`;

const ALIVE_TTL_MS = 10_000;
const RESERVATION_TTL_MS = 30_000;
/** Deletes a reservation only if it is still this run's (a lapsed one may be another run's by now). */
const RELEASE_SCRIPT = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`;

export interface AgentLineDeps {
  db: Db;
  redis: Redis;
  coordinator: RunCoordinator;
  log: Logger;
  /** Local wake-ups: an agent of a pool became idle on this hub (the registry's "idle" event). */
  onIdle?: (listener: (pool: string) => void) => () => void;
}

export interface LineOptions {
  /** How long the pool may have fewer connected agents than the plan asks for before the run errors. */
  connectGraceMs: number;
  /** Re-check at least this often (wake-ups make most checks immediate). */
  checkMs?: number;
  signal?: AbortSignal;
}

/** The agents an admitted run holds until release(). */
export interface Reservation {
  agentIds: string[];
  release(): Promise<void>;
}

export type Admission =
  | { kind: "admitted"; selection: Extract<AgentSelection, { ok: true }>; reservation: Reservation }
  /** The run cannot be served: the reason is the run's error. */
  | { kind: "refused"; reason: string }
  /** The run is no longer queued (aborted while it waited): nothing to do. */
  | { kind: "gone" }
  /** `signal` fired (the hub is stopping): the run still waits, its job goes back to the queue. */
  | { kind: "stopping" };

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export class AgentLine {
  constructor(private readonly deps: AgentLineDeps) {}

  /** Waits for the run's turn and its agents; see the class comment. */
  async admit(run: RunRow, opts: LineOptions): Promise<Admission> {
    const { redis, coordinator, log } = this.deps;
    const plan = run.plan;
    const pool = poolKey(run.orgId, plan.agents.pool);
    const line = lineKey(pool);
    const maxWaitMs = plan.agents.maxWait !== undefined ? durationMs(plan.agents.maxWait) : null;
    const queuedAt = run.createdAt.getTime();
    // A wake-up that comes while the loop is checking (not sleeping) skips the next sleep.
    let pending = false;
    let resume: (() => void) | null = null;
    const wake = () => {
      pending = true;
      resume?.();
    };
    const offLine = coordinator.onLine(pool, () => wake());
    const offIdle = this.deps.onIdle?.((p) => (p === pool ? wake() : undefined)) ?? (() => {});
    const onAbort = () => wake();
    opts.signal?.addEventListener("abort", onAbort);
    let shortSince: number | null = null;
    let lastPosition = 0;
    try {
      for (;;) {
        if (opts.signal?.aborted) return { kind: "stopping" };
        await redis.multi().set(aliveKey(run.id), "1", "PX", ALIVE_TTL_MS).zadd(line, "NX", queuedAt, run.id).exec();
        const now = await getRunOfAnyOrg(this.deps.db, run.id);
        if (now?.status !== "queued") return { kind: "gone" };

        const position = await this.position(line, run.id);
        if (position !== lastPosition) log.info({ runId: run.id, pool, position }, "run waiting for agents");
        lastPosition = position;
        if (position === 1) {
          const turn = await this.tryTake(run, plan, pool);
          if (turn.kind !== "wait") return turn;
          if (turn.short) shortSince ??= Date.now();
          else shortSince = null;
          if (shortSince !== null && Date.now() - shortSince >= opts.connectGraceMs)
            return { kind: "refused", reason: `${turn.short} (waited ${seconds(opts.connectGraceMs)} for more to connect)` };
        }
        if (maxWaitMs !== null && Date.now() - queuedAt >= maxWaitMs) {
          return {
            kind: "refused",
            reason: `waited agents.maxWait (${seconds(maxWaitMs)}) for an agent in pool '${plan.agents.pool}' and none was free (position ${position} in its queue); raise agents.maxWait, or add agents to the pool`,
          };
        }
        if (!pending) {
          const nap = new AbortController();
          await new Promise<void>((resolve) => {
            resume = resolve;
            void sleep(opts.checkMs ?? 1000, nap.signal).then(resolve);
          });
          resume = null;
          nap.abort();
        }
        pending = false;
      }
    } catch (err) {
      log.error({ runId: run.id, err: errorMessage(err) }, "could not wait in the pool's line");
      throw err;
    } finally {
      offLine();
      offIdle();
      opts.signal?.removeEventListener("abort", onAbort);
      // Admitted or not, the run leaves the line (re-entering, as a recovered job does, restores its place: the score is its creation time).
      await redis
        .multi()
        .zrem(line, run.id)
        .del(aliveKey(run.id))
        .exec()
        .catch(() => undefined);
      await coordinator.wakeLine(pool).catch(() => undefined);
    }
  }

  /** 1-based place among the line's live members (members whose hub died are passed over; ended runs are dropped). */
  private async position(line: string, runId: string): Promise<number> {
    const { redis, db } = this.deps;
    const rank = await redis.zrank(line, runId);
    if (rank === null || rank === 0) return 1;
    const ahead = await redis.zrange(line, 0, rank - 1);
    const alive = await redis.mget(ahead.map(aliveKey));
    let position = 1;
    for (let i = 0; i < ahead.length; i++) {
      if (alive[i] !== null) {
        position++;
        continue;
      }
      // Not refreshed lately: its hub died (BullMQ will hand the job to a live hub) or it ended without leaving.
      const row = await getRunOfAnyOrg(db, ahead[i]!);
      if (row?.status !== "queued") await redis.zrem(line, ahead[i]!);
    }
    return position;
  }

  /** At the head of the line: reserve the agents if enough are free, else say why it waits. */
  private async tryTake(
    run: RunRow,
    plan: Plan,
    pool: string,
  ): Promise<Extract<Admission, { kind: "admitted" | "refused" }> | { kind: "wait"; short: string | null }> {
    const { db, redis, log } = this.deps;
    const now = Date.now();
    const connected = (await listAgents(db, run.orgId)).filter((a) => a.pool === plan.agents.pool && effectiveAgentStatus(a, now) !== "offline");
    // "all" of an empty pool is a plan error, not a wait (as it was before the line).
    if (plan.agents.count === "all" && connected.length === 0) {
      const none = selectAgents("all", plan.agents.pool, []);
      if (!none.ok) return { kind: "refused", reason: none.reason };
    }
    const need = plan.agents.count === "all" ? connected.length : plan.agents.count;
    if (connected.length < need) {
      return { kind: "wait", short: `plan asks for ${plural(need, "agent")}; pool '${plan.agents.pool}' has ${connected.length} connected` };
    }
    const idle = connected.filter((a) => effectiveAgentStatus(a, now) === "online");
    const holders = idle.length > 0 ? await redis.mget(idle.map((a) => reservedKey(a.id))) : [];
    const free: IdleAgent[] = idle.filter((_, i) => holders[i] === null || holders[i] === run.id);
    if (free.length < need) return { kind: "wait", short: null };
    const selection = selectAgents(plan.agents.count, plan.agents.pool, free, plan.connections.count);
    if (!selection.ok) return { kind: "refused", reason: selection.reason };
    const agentIds = selection.slots.map((s) => s.agentId).filter((id): id is string => id !== null);
    const taken: string[] = [];
    for (const id of agentIds) {
      const ok = await redis.set(reservedKey(id), run.id, "PX", RESERVATION_TTL_MS, "NX");
      if (ok === null && (await redis.get(reservedKey(id))) !== run.id) break;
      taken.push(id);
    }
    if (taken.length < agentIds.length) {
      // Another run got one first (a replica's lapsed view): give back what we took and look again.
      await this.release(run.id, taken);
      return { kind: "wait", short: null };
    }
    log.info({ runId: run.id, pool, agents: agentIds }, "run admitted: agents reserved");
    return { kind: "admitted", selection, reservation: this.hold(run.id, pool, agentIds) };
  }

  /** Keeps the reservations alive until release(). */
  private hold(runId: string, pool: string, agentIds: string[]): Reservation {
    const { redis, log, coordinator } = this.deps;
    const refresh = setInterval(() => {
      for (const id of agentIds) {
        void redis
          .set(reservedKey(id), runId, "PX", RESERVATION_TTL_MS, "XX")
          .catch((err) => log.warn({ runId, agentId: id, err: errorMessage(err) }, "could not refresh an agent reservation"));
      }
    }, RESERVATION_TTL_MS / 3);
    refresh.unref();
    let released: Promise<void> | null = null;
    return {
      agentIds,
      release: () =>
        (released ??= (async () => {
          clearInterval(refresh);
          await this.release(runId, agentIds);
          await coordinator.wakeLine(pool).catch(() => undefined);
        })()),
    };
  }

  private async release(runId: string, agentIds: string[]): Promise<void> {
    for (const id of agentIds) {
      await this.deps.redis
        .eval(RELEASE_SCRIPT, 1, reservedKey(id), runId)
        .catch((err) => this.deps.log.warn({ runId, agentId: id, err: errorMessage(err) }, "could not release an agent reservation"));
    }
  }
}
