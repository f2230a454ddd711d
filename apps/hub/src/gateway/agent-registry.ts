import { EventEmitter } from "node:events";
import type { Socket } from "socket.io";
import type { Logger } from "pino";
import { AGENT_EVENTS, type AgentHello, type AgentStatus, type Heartbeat, type ShardEnd } from "@volley/contracts";
import { deferred, seconds, type Deferred } from "../util/wait";

/** One shard held by one agent; settles when the agent ends it or is declared lost. */
export interface ShardLease {
  runId: string;
  shardId: string;
  ended: Deferred<ShardEnd>;
  /** Resolves with the reason once the agent's reconnect grace has run out. */
  lost: Deferred<string>;
  /** The agent acked the assign (or connected holding the shard): from then on it says it holds it. */
  confirmed: boolean;
}

export interface AgentSession {
  readonly agentId: string;
  readonly instanceId: string;
  readonly name: string;
  readonly pool: string;
  /** null while disconnected inside the grace period. */
  socket: Socket | null;
  busy: boolean;
  lease: ShardLease | null;
  graceTimer: NodeJS.Timeout | null;
  /** Messages sent while disconnected, delivered in order on reconnect. */
  outbox: Array<{ event: string; payload: unknown }>;
}

/** "agent eu-1 (agt_…)": how agents are named in every error a user reads. */
export const describeAgent = (s: Pick<AgentSession, "name" | "agentId">) => `agent ${s.name} (${s.agentId})`;

/**
 * The agents connected to this hub replica, by pool, with idle/busy state. An agent whose socket
 * drops keeps its session (and its shard) for `graceMs` so it can reconnect with the same
 * instanceId and carry on; only then is it declared lost. Emits "idle"(pool) whenever an agent
 * becomes free for work, "pool"(pool) whenever an agent joins a pool (a new session), "vacated"(pool)
 * when a pool's last session ends, and "adopt"(session) when an agent unknown here connects holding
 * a shard (its lease already taken).
 */
export class AgentRegistry extends EventEmitter {
  private readonly sessions = new Map<string, AgentSession>();

  constructor(private readonly opts: { graceMs: number; log: Logger; onStatus: (agentId: string, status: AgentStatus) => void }) {
    super();
    this.setMaxListeners(0);
  }

  /**
   * `agentId` is the agents row upsertAgent matched, so sessions are keyed by it, never by the
   * hello's instance id alone: that id is printed in the agent's log, and a row is only matched
   * with the same org and the same persisted id (or, without one, the same token).
   */
  attach(hello: AgentHello, agentId: string, socket: Socket): AgentSession {
    const existing = this.sessions.get(agentId);
    if (existing && existing.instanceId === hello.instanceId && (existing.busy || existing.socket)) {
      // Same process reconnecting (possibly before we noticed the old socket drop): resume its session.
      if (existing.graceTimer) clearTimeout(existing.graceTimer);
      existing.graceTimer = null;
      const old = existing.socket;
      existing.socket = socket;
      if (old && old !== socket) old.disconnect(true);
      for (const { event, payload } of existing.outbox.splice(0)) socket.emit(event, payload);
      this.opts.log.info({ agentId, name: hello.name, shardId: existing.lease?.shardId }, "agent reconnected");
      this.opts.onStatus(agentId, existing.busy ? "busy" : "online");
      if (!existing.busy) this.emit("idle", existing.pool);
      return existing;
    }
    this.supersede(agentId, hello.instanceId);
    const held = hello.shard;
    const session: AgentSession = {
      agentId,
      instanceId: hello.instanceId,
      name: hello.name,
      pool: hello.pool,
      socket,
      busy: !!held,
      lease: null,
      graceTimer: null,
      outbox: [],
    };
    this.sessions.set(agentId, session);
    this.emit("pool", session.pool);
    if (held) {
      // A process new to this hub but mid-shard (the hub that assigned it restarted): busy, with the
      // lease taken before any of its messages are read, so its spooled shard.end finds it.
      this.lease(session, held.runId, held.shardId, true);
      this.opts.onStatus(agentId, "busy");
      this.emit("adopt", session);
    } else this.emit("idle", session.pool);
    return session;
  }

  /**
   * A new process of an agent we hold a session for (same row: its persisted id; it restarted
   * before its old connection was seen to drop). The old process is gone or about to be: its
   * session ends now, or its grace timer would later mark the new process's row offline. A shard
   * it held is lost at once — the new process does not hold it (it would have said so in its hello).
   */
  private supersede(agentId: string, instanceId: string): void {
    const old = this.sessions.get(agentId);
    if (old && old.instanceId !== instanceId) {
      this.forget(old);
      if (old.graceTimer) clearTimeout(old.graceTimer);
      old.graceTimer = null;
      this.opts.log.warn(
        { agentId, name: old.name, oldInstanceId: old.instanceId, instanceId, shardId: old.lease?.shardId },
        "agent connected as a new process; dropping its previous connection (two agents running on one AGENT_STATE_DIR file would keep replacing each other)",
      );
      const socket = old.socket;
      old.socket = null;
      socket?.disconnect(true);
      old.lease?.lost.resolve("restarted: a new process of the agent connected while its shard was running");
    }
  }

  /** Ends a session; the pool's last one says so ("vacated"), so its dispatcher can be released. */
  private forget(session: AgentSession): void {
    if (this.sessions.get(session.agentId) !== session) return;
    this.sessions.delete(session.agentId);
    if (!this.hasPool(session.pool)) this.emit("vacated", session.pool);
  }

  detach(socket: Socket, reason: string): void {
    const session = [...this.sessions.values()].find((s) => s.socket === socket);
    if (!session) return; // an old socket of a session that already moved on
    session.socket = null;
    if (!session.busy) {
      this.forget(session);
      this.opts.onStatus(session.agentId, "offline");
      return;
    }
    this.opts.log.warn(
      { agentId: session.agentId, name: session.name, reason, graceMs: this.opts.graceMs },
      "busy agent disconnected; waiting for it to reconnect",
    );
    session.graceTimer = setTimeout(() => {
      session.graceTimer = null;
      if (session.socket) return;
      this.forget(session);
      this.opts.onStatus(session.agentId, "offline");
      session.lease?.lost.resolve(`disconnected (${reason}) and did not reconnect within ${seconds(this.opts.graceMs)}`);
    }, this.opts.graceMs);
  }

  /**
   * Takes an idle connected agent of the pool for a shard, synchronously so two shards never get one
   * agent. With `agentId`, only that agent (the one the shard was sized for): null if it is not idle here.
   */
  takeIdle(pool: string, agentId?: string): AgentSession | null {
    for (const s of this.sessions.values()) {
      if (s.pool === pool && !s.busy && s.socket?.connected && (agentId === undefined || s.agentId === agentId)) {
        s.busy = true;
        this.opts.onStatus(s.agentId, "busy");
        return s;
      }
    }
    return null;
  }

  lease(session: AgentSession, runId: string, shardId: string, confirmed = false): ShardLease {
    session.lease = { runId, shardId, ended: deferred(), lost: deferred(), confirmed };
    return session.lease;
  }

  /**
   * Squares what the agent says it holds (its heartbeat, read as it arrives) with this hub's lease,
   * so neither side can stay wedged on a shard the other has let go of:
   * - the agent holds an armed or running shard the hub has no lease for here (its end timed out,
   *   an abort crossed its assign): tell the agent to drop it;
   * - the hub's lease was confirmed (assign acked) before this heartbeat, which says the agent holds
   *   nothing: the agent has let go (its shard.end never arrived), so the lease ends as lost.
   * Messages on one socket arrive in order, so a heartbeat read after the assign's ack was sent after it.
   */
  reconcile(session: AgentSession, hb: Pick<Heartbeat, "busy" | "shard">): void {
    const held = hb.shard;
    const lease = session.lease;
    if (held && held.state !== "ending" && (!lease || lease.shardId !== held.shardId)) {
      this.opts.log.warn(
        { agentId: session.agentId, shardId: held.shardId, state: held.state, leased: lease?.shardId ?? null },
        "agent holds a shard this hub does not supervise; telling it to drop it",
      );
      this.send(session, AGENT_EVENTS.shardAbort, {
        shardId: held.shardId,
        reason: "the hub no longer supervises this shard (it ended, or was aborted before it started); dropped so the agent is free",
      });
      return;
    }
    if (!hb.busy && !held && lease?.confirmed && !lease.ended.settled && !lease.lost.settled) {
      this.opts.log.warn({ agentId: session.agentId, shardId: lease.shardId }, "agent reports holding no shard while this hub holds its lease; freeing it");
      lease.lost.resolve(`reported holding no shard (it let go of shard ${lease.shardId} without its shard.end reaching the hub)`);
    }
  }

  /** The agent is done with its shard: idle again if still connected, forgotten if it was lost. */
  release(session: AgentSession): void {
    session.lease = null;
    session.busy = false;
    session.outbox.length = 0;
    if (this.sessions.get(session.agentId) !== session) return;
    if (session.socket) {
      this.opts.onStatus(session.agentId, "online");
      this.emit("idle", session.pool);
    } else {
      // Disconnected while busy and the shard is over: nothing left to reconnect for.
      if (session.graceTimer) clearTimeout(session.graceTimer);
      this.forget(session);
      this.opts.onStatus(session.agentId, "offline");
    }
  }

  /** Sends now, or on reconnect if the agent is inside its grace period. */
  send(session: AgentSession, event: string, payload: unknown): void {
    if (session.socket?.connected) session.socket.emit(event, payload);
    else session.outbox.push({ event, payload });
  }

  bySocket(socket: Socket): AgentSession | undefined {
    return [...this.sessions.values()].find((s) => s.socket === socket);
  }

  idleCount(pool: string): number {
    let n = 0;
    for (const s of this.sessions.values()) if (s.pool === pool && !s.busy && s.socket?.connected) n++;
    return n;
  }

  /** Resolves when an agent of the pool becomes idle, or when `signal` fires. */
  waitIdle(pool: string, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.off("idle", onIdle);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const onIdle = (p: string) => {
        if (p === pool) done();
      };
      if (signal.aborted || this.idleCount(pool) > 0) return resolve();
      this.on("idle", onIdle);
      signal.addEventListener("abort", done, { once: true });
    });
  }

  /** Whether any session (connected, or reconnecting within its grace) is in the pool. */
  hasPool(pool: string): boolean {
    for (const s of this.sessions.values()) if (s.pool === pool) return true;
    return false;
  }

  all(): AgentSession[] {
    return [...this.sessions.values()];
  }

  /** Stops grace timers; used at shutdown. */
  clear(): void {
    for (const s of this.sessions.values()) if (s.graceTimer) clearTimeout(s.graceTimer);
    this.sessions.clear();
  }
}
