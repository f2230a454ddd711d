import { io, type Socket } from "socket.io-client";
import {
  AGENT_EVENTS,
  agentEndpoint,
  MIN_AGENT_VERSION,
  type Ack,
  type AgentHello,
  type HeldShard,
  type IntervalFrame,
  type ShardAbort,
  type ShardEnd,
  type ShardJob,
  type ShardStart,
} from "@volley/contracts";

export interface ScriptedAgentOptions {
  /** The hub (http://127.0.0.1:3001), or web's relay to it (http://localhost:3000/hub). */
  hubUrl: string;
  token?: string;
  name?: string;
  pool?: string;
  instanceId?: string;
  /** The persisted id a real agent keeps in its state file (absent: none, like older agents). */
  agentKey?: string;
  /** Overrides of the capacity it reports in its hello (the hub weights shards by it). */
  capacity?: Partial<AgentHello["capacity"]>;
  /** The shard it claims to hold as it connects (an agent reconnecting to a restarted hub). */
  shard?: HeldShard;
  /** The version its hello names (default: the oldest the hub accepts). */
  version?: string;
}

type Received = { assign: ShardJob[]; start: Array<ShardStart & { receivedAt: number }>; abort: Array<ShardAbort & { receivedAt: number }> };

/**
 * A test double of apps/agent speaking the agent protocol over socket.io-client, driven by the
 * test: it acks shard.assign with `armReply` and records what the hub sends, so a test can play
 * any sequence (frames, end, silence, disconnect) and assert what the hub did with it.
 */
export class ScriptedAgent {
  readonly received: Received = { assign: [], start: [], abort: [] };
  armReply: Ack = { ok: true };
  private waiters: Array<() => void> = [];

  private constructor(
    readonly socket: Socket,
    readonly agentId: string,
    readonly name: string,
  ) {
    socket.on(AGENT_EVENTS.shardAssign, (job: ShardJob, ack: (a: Ack) => void) => {
      this.received.assign.push(job);
      ack(this.armReply);
      this.notify();
    });
    socket.on(AGENT_EVENTS.shardStart, (s: ShardStart) => {
      this.received.start.push({ ...s, receivedAt: Date.now() });
      this.notify();
    });
    socket.on(AGENT_EVENTS.shardAbort, (a: ShardAbort) => {
      this.received.abort.push({ ...a, receivedAt: Date.now() });
      this.notify();
    });
  }

  static hello(opts: ScriptedAgentOptions): AgentHello {
    const name = opts.name ?? "scripted-agent";
    return {
      token: opts.token ?? "test-agent-token",
      instanceId: opts.instanceId ?? `${name}-${Math.random().toString(36).slice(2)}`,
      name,
      version: opts.version ?? MIN_AGENT_VERSION,
      pool: opts.pool ?? "default",
      labels: {},
      capacity: { cores: 2, memoryMb: 2048, maxConnections: 10_000, sourceAddresses: [], ...opts.capacity },
      ...(opts.shard ? { shard: opts.shard } : {}),
      ...(opts.agentKey ? { agentKey: opts.agentKey } : {}),
    };
  }

  /** Connects and resolves on `welcome`; rejects with the hub's message if the handshake is refused. */
  static connect(opts: ScriptedAgentOptions): Promise<ScriptedAgent> {
    const hello = ScriptedAgent.hello(opts);
    // agentEndpoint, as apps/agent: a hub URL with a path (web's /hub relay) keeps it for Socket.IO's path.
    const { url, path } = agentEndpoint(opts.hubUrl);
    const socket = io(url, { path, auth: hello, transports: ["websocket"], reconnection: false, timeout: 5000 });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        socket.close();
        reject(new Error("no welcome within 5 s"));
      }, 5000);
      socket.once(AGENT_EVENTS.welcome, (w: { agentId: string }) => {
        clearTimeout(timer);
        resolve(new ScriptedAgent(socket, w.agentId, hello.name));
      });
      socket.once("connect_error", (err) => {
        clearTimeout(timer);
        socket.close();
        reject(err);
      });
    });
  }

  private notify(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Waits (bounded) until `check` returns a value, re-checking on every message from the hub. */
  async until<T>(check: (r: Received) => T | undefined, timeoutMs = 5000, what = "hub message"): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = check(this.received);
      if (v !== undefined) return v;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${this.name}: no ${what} within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 100));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  nextStart(timeoutMs?: number) {
    return this.until((r) => r.start.at(-1), timeoutMs, "shard.start");
  }

  nextAbort(timeoutMs?: number) {
    return this.until((r) => r.abort.at(-1), timeoutMs, "shard.abort");
  }

  sendFrame(frame: IntervalFrame | Record<string, unknown>): Promise<Ack> {
    return this.socket.timeout(5000).emitWithAck(AGENT_EVENTS.frame, frame) as Promise<Ack>;
  }

  end(end: ShardEnd): Promise<Ack> {
    return this.socket.timeout(5000).emitWithAck(AGENT_EVENTS.shardEnd, end) as Promise<Ack>;
  }

  /** `shard`: the shard it claims to hold (as apps/agent reports its ShardSlot). */
  heartbeat(busy = false, shard?: HeldShard): Promise<Ack> {
    const health = { cpu: 1, eventLoopDelayMs: { p50: 1, max: 1 }, rssMb: 50, sendLagMaxMs: 0, saturated: false };
    return this.socket.timeout(5000).emitWithAck(AGENT_EVENTS.heartbeat, { busy, health, ...(shard ? { shard } : {}) }) as Promise<Ack>;
  }

  clockPing(): Promise<{ hubTime: number }> {
    return this.socket.timeout(5000).emitWithAck(AGENT_EVENTS.clockPing, { t0: Date.now() }) as Promise<{ hubTime: number }>;
  }

  close(): void {
    this.socket.close();
  }
}
