import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Server, type Socket as HubSocket } from "socket.io";
import { AGENT_EVENTS, AGENT_NAMESPACE, heartbeatSchema, intervalFrameSchema, shardEndSchema, type IntervalFrame, type ShardEnd } from "@volley/contracts";

export interface TestHub {
  url: string;
  frames: IntervalFrame[];
  /** performance.now() at each heartbeat's arrival. */
  heartbeatArrivals: number[];
  /** Agent connections accepted so far (more than one: the link was dropped and came back). */
  connections: number;
  /** Disconnect reasons seen, in order. */
  disconnects: string[];
  socket(): HubSocket | undefined;
  /** Asks the agent (acked request), as the hub's shard runner does. */
  ask(event: string, payload: unknown, timeoutMs?: number): Promise<unknown>;
  /** The next shard.end, with its arrival time. */
  end: Promise<{ end: ShardEnd; at: number }>;
  close(): Promise<void>;
}

/**
 * Test and bench support: a real Socket.IO endpoint speaking the hub gateway's agent events
 * (welcome, clock.ping, heartbeat, frame and shard.end acks), in this process, without the hub's
 * database and Redis. `pingIntervalMs`/`pingTimeoutMs` tighten Socket.IO's own liveness check (the
 * hub keeps the defaults, 25 s + 20 s), so an agent whose main thread stalls is dropped quickly.
 */
export async function startTestHub(opts: { pingIntervalMs?: number; pingTimeoutMs?: number } = {}): Promise<TestHub> {
  const http = createServer();
  const io = new Server(http, {
    maxHttpBufferSize: 8 * 1024 * 1024,
    ...(opts.pingIntervalMs ? { pingInterval: opts.pingIntervalMs } : {}),
    ...(opts.pingTimeoutMs ? { pingTimeout: opts.pingTimeoutMs } : {}),
  });
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  let current: HubSocket | undefined;
  let resolveEnd!: (v: { end: ShardEnd; at: number }) => void;
  const hub: TestHub = {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    frames: [],
    heartbeatArrivals: [],
    connections: 0,
    disconnects: [],
    socket: () => current,
    ask: (event, payload, timeoutMs = 5000) => {
      if (!current) return Promise.reject(new Error("no agent connected"));
      return current.timeout(timeoutMs).emitWithAck(event, payload) as Promise<unknown>;
    },
    end: new Promise((r) => (resolveEnd = r)),
    close: () => new Promise<void>((r) => void io.close(() => r())),
  };
  io.of(AGENT_NAMESPACE).on("connection", (socket) => {
    hub.connections++;
    current = socket;
    socket.on("disconnect", (reason) => hub.disconnects.push(reason));
    socket.emit(AGENT_EVENTS.welcome, { agentId: `test-agent-${hub.connections}` });
    socket.on(AGENT_EVENTS.clockPing, (ack: (a: { hubTime: number }) => void) => ack({ hubTime: Date.now() }));
    socket.on(AGENT_EVENTS.heartbeat, (hb: unknown) => {
      heartbeatSchema.parse(hb);
      hub.heartbeatArrivals.push(performance.now());
    });
    socket.on(AGENT_EVENTS.frame, (raw: unknown, ack: (a: unknown) => void) => {
      hub.frames.push(intervalFrameSchema.parse(raw));
      ack({ ok: true });
    });
    socket.on(AGENT_EVENTS.shardEnd, (raw: unknown, ack: (a: unknown) => void) => {
      ack({ ok: true });
      resolveEnd({ end: shardEndSchema.parse(raw), at: performance.now() });
    });
  });
  return hub;
}
