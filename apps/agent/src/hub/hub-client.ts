import type { Logger } from "pino";
import { io, type Socket } from "socket.io-client";
import {
  AGENT_EVENTS,
  agentEndpoint,
  clockPingAckSchema,
  welcomeSchema,
  type TargetPolicy,
  type Ack,
  type AgentHello,
  type Heartbeat,
  type Plan,
} from "@volley/contracts";
import { systemClock } from "../engine/clock";
import { HealthMonitor } from "../engine/health-monitor";
import { EngineWorkers } from "../workers/engine-workers";
import { estimateClockOffset, type ClockEstimate } from "./clock-sync";
import { ReliableOutbox } from "./reliable-outbox";
import { ShardSlot } from "./shard-slot";

export interface HubClientOptions {
  hubUrl: string;
  hello: AgentHello;
  log: Logger;
  onConnected?: () => void;
  onDisconnected?: (reason: string) => void;
  /** The hub's handshake refused the agent for good (its words: a bad token, a version it no longer accepts); retried all the same. */
  onRefused?: (reason: string) => void;
  heartbeatMs?: number;
  clockSyncMs?: number;
  clockSamples?: number;
  ackTimeoutMs?: number;
  reconnectDelayMs?: number;
  reconnectDelayMaxMs?: number;
  /**
   * Engine worker threads a shard is split across (AGENT_WORKERS); 0 or absent runs it on this
   * thread, beside the hub link. With workers, this thread keeps only the link, heartbeats and
   * control messages, so a saturated engine cannot delay them.
   */
  workers?: number;
}

type AckFn = (ack: Ack) => void;

/**
 * The agent's side of the hub gateway: one outbound Socket.IO connection (WebSocket first, long
 * polling when WebSocket is blocked), kept up forever; clock sync; shard assign/start/abort; frames
 * and shard.end through a spool that survives reconnects; heartbeats.
 */
export class HubClient {
  private readonly socket: Socket;
  private readonly outbox: ReliableOutbox;
  private readonly slot: ShardSlot;
  private readonly health = new HealthMonitor();
  private readonly engines: EngineWorkers | undefined;
  private readonly log: Logger;
  private offset: ClockEstimate | undefined;
  private syncing: Promise<void> | undefined;
  private agentId: string;
  /** What the hub's install lets load reach; self-hosted until the welcome says otherwise. */
  private targetPolicy: TargetPolicy = { mode: "self-hosted" };
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private syncTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private retries = 0;
  private stopped = false;

  constructor(private readonly opts: HubClientOptions) {
    this.log = opts.log;
    this.agentId = opts.hello.instanceId;
    const endpoint = agentEndpoint(opts.hubUrl);
    this.socket = io(endpoint.url, {
      path: endpoint.path,
      transports: ["websocket", "polling"],
      // Without this, a failed WebSocket never falls back to polling (socket.io-client 4.8).
      tryAllTransports: true,
      // Read at every (re)connect: the held shard changes over the process's life.
      auth: (cb) => {
        const shard = this.slot?.held();
        cb(shard ? { ...opts.hello, shard } : opts.hello);
      },
      autoConnect: false,
      forceNew: true,
      reconnection: true,
      reconnectionAttempts: Infinity,
      reconnectionDelay: opts.reconnectDelayMs ?? 1000,
      reconnectionDelayMax: opts.reconnectDelayMaxMs ?? 15_000,
      randomizationFactor: 0.5,
    });
    this.outbox = new ReliableOutbox(this.socket, this.log, { ackTimeoutMs: opts.ackTimeoutMs ?? 5000 });
    const engines = (this.engines = opts.workers ? new EngineWorkers(opts.workers) : undefined);
    this.slot = new ShardSlot({
      outbox: this.outbox,
      log: this.log,
      limits: { maxConnections: opts.hello.capacity.maxConnections },
      clock: () => systemClock(() => this.offset?.offsetMs ?? 0),
      agentId: () => this.agentId,
      sourceAddresses: opts.hello.capacity.sourceAddresses,
      publicOnly: () => this.targetPolicy.mode === "hosted",
      ...(engines ? { engine: (plan, runOpts) => engines.run(plan, runOpts) } : {}),
    });
    this.wire();
  }

  /** hub − local clock, ms, from the last successful sync (0 before the first). */
  get clockOffsetMs(): number {
    return this.offset?.offsetMs ?? 0;
  }

  get connected(): boolean {
    return this.socket.connected;
  }

  get busy(): boolean {
    return this.slot.busy;
  }

  /** Engine worker threads started (0 until the first shard is armed). */
  get engineThreads(): number {
    return this.engines?.started ?? 0;
  }

  start(): void {
    // The engine threads start at the first shard's arm (see arm), not here: an idle agent holds
    // only its hub link (resident memory, issue 29).
    if (!this.stopped) this.socket.connect();
    const beat = this.opts.heartbeatMs ?? 5000;
    this.heartbeatTimer = setInterval(() => this.heartbeat(), beat);
    this.syncTimer = setInterval(() => void this.syncClock(), this.opts.clockSyncMs ?? 30_000);
  }

  /**
   * Graceful stop: abort the running shard (its final frame and shard.end still go out), wait up to
   * flushTimeoutMs for the hub to ack them, then disconnect.
   */
  async stop(flushTimeoutMs = 5000): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.heartbeatTimer);
    clearInterval(this.syncTimer);
    clearTimeout(this.retryTimer);
    await this.slot.abortCurrent("agent shutting down");
    if (this.socket.connected && !(await this.outbox.whenIdle(flushTimeoutMs))) {
      this.log.warn({ unsent: this.outbox.size }, "hub did not ack everything before shutdown");
    }
    this.outbox.close();
    this.health.stop();
    await this.engines?.close();
    this.socket.disconnect();
  }

  private wire(): void {
    const s = this.socket;
    s.on("connect", () => {
      this.retries = 0;
      this.log.debug({ transport: s.io.engine.transport.name }, "connected");
      this.opts.onConnected?.();
      void this.syncClock();
    });
    s.on("disconnect", (reason) => {
      this.log.warn({ reason }, "disconnected from hub");
      this.opts.onDisconnected?.(reason);
      // socket.io retries transport failures itself, but not a server-side kick: retry those here.
      if (reason === "io server disconnect") this.retryLater();
    });
    s.on("connect_error", (err) => {
      this.log.warn({ err: err.message }, `cannot connect to hub ${this.opts.hubUrl}`);
      // A refusal by the hub's middleware (bad token...) is not retried by socket.io itself.
      if (!s.active) {
        if ((err as Error & { data?: { permanent?: unknown } }).data?.permanent === true) this.opts.onRefused?.(err.message);
        this.retryLater();
      }
    });
    s.on(AGENT_EVENTS.welcome, (payload: unknown) => {
      const w = welcomeSchema.safeParse(payload);
      if (!w.success) return;
      this.agentId = w.data.agentId;
      if (w.data.targetPolicy) this.targetPolicy = w.data.targetPolicy;
    });
    s.on(AGENT_EVENTS.shardAssign, async (payload: unknown, ack?: AckFn) => {
      const result = this.slot.assign(payload);
      const job = result.ok ? this.slot.armedJob() : undefined;
      if (job) await this.arm(job.plan, job.shardId);
      this.answer(ack, result);
    });
    s.on(AGENT_EVENTS.shardStart, async (payload: unknown, ack?: AckFn) => {
      // The start instant is in hub time: convert with a measured offset, not the default of 0.
      if (!this.offset && this.syncing) await this.syncing;
      this.answer(ack, this.slot.start(payload));
    });
    s.on(AGENT_EVENTS.shardAbort, (payload: unknown, ack?: AckFn) => this.answer(ack, this.slot.abort(payload)));
    s.on(AGENT_EVENTS.shardRate, (payload: unknown, ack?: AckFn) => this.answer(ack, this.slot.rate(payload)));
  }

  /**
   * Before the assign is acknowledged: the hub sets the start instant only once every shard is
   * armed, so the engine threads start here (the first time: seconds from TypeScript sources) and
   * each warms its part (armShard), and no start instant passes while they load. A thread that
   * cannot start is retried by the run, which errors naming why if it fails again.
   */
  private async arm(plan: Plan, shardId: string): Promise<void> {
    const began = performance.now();
    const warm = this.engines
      ? await this.engines.arm(plan, shardId, this.opts.hello.capacity.sourceAddresses)
      : [await (await import("../engine/run-shard")).armShard(plan)];
    this.log.debug({ shardId, ms: Math.round(performance.now() - began), warm }, "engine armed");
  }

  private answer(ack: AckFn | undefined, result: Ack): void {
    if (!result.ok) this.log.warn({ error: result.error }, "refused a hub request");
    if (typeof ack === "function") ack(result);
  }

  private retryLater(): void {
    if (this.stopped) return;
    clearTimeout(this.retryTimer);
    const base = this.opts.reconnectDelayMs ?? 1000;
    const max = this.opts.reconnectDelayMaxMs ?? 15_000;
    const delay = Math.min(max, base * 2 ** Math.min(this.retries++, 10)) * (0.75 + Math.random() / 2);
    this.retryTimer = setTimeout(() => {
      if (!this.stopped && !this.socket.connected) this.socket.connect();
    }, delay);
  }

  private syncClock(): Promise<void> {
    if (this.syncing || !this.socket.connected) return this.syncing ?? Promise.resolve();
    const ask = async () => {
      // clock.ping carries no payload: the hub answers through the ack only.
      const answer: unknown = await this.socket.timeout(2000).emitWithAck(AGENT_EVENTS.clockPing);
      return clockPingAckSchema.parse(answer).hubTime;
    };
    this.syncing = estimateClockOffset(ask, this.opts.clockSamples ?? 8)
      .then((estimate) => {
        if (!estimate) return this.log.warn("clock sync failed; keeping the previous offset");
        this.offset = estimate;
        this.log.debug({ offsetMs: estimate.offsetMs, rttMs: estimate.rttMs }, "clock synced");
      })
      .finally(() => (this.syncing = undefined));
    return this.syncing;
  }

  private heartbeat(): void {
    if (!this.socket.connected) return;
    const shard = this.slot.held();
    // The held shard lets the hub reconcile: drop one it no longer supervises, free one it thinks we hold.
    const beat: Heartbeat = { busy: this.slot.busy, health: this.health.sample(), ...(shard ? { shard } : {}) };
    this.socket.emit(AGENT_EVENTS.heartbeat, beat);
  }
}
