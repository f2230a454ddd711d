import { createHash, timingSafeEqual } from "node:crypto";
import type { Server as HttpServer } from "node:http";
import { Server, type Socket } from "socket.io";
import { createAdapter } from "@socket.io/redis-adapter";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import {
  AGENT_EVENTS,
  AGENT_NAMESPACE,
  REDIS_KEYS,
  agentHelloSchema,
  describeIssues,
  fieldIssues,
  frameMessageSchema,
  heartbeatSchema,
  shardEndSchema,
  type Ack,
  type AgentHello,
} from "@volley/contracts";
import { upsertAgent, type Db } from "@volley/db";
import { errorMessage } from "../util/wait";
import type { AgentRegistry } from "./agent-registry";

export interface AgentGatewayOptions {
  httpServer: HttpServer;
  db: Db;
  /** Command connection: XADD of frames. */
  redis: Redis;
  /** Two dedicated connections for the Socket.IO Redis adapter (one of them subscribes). */
  adapterPub: Redis;
  adapterSub: Redis;
  agentToken: string;
  registry: AgentRegistry;
  log: Logger;
}

interface AgentSocketData {
  hello: AgentHello;
  agentId: string;
}

const digest = (s: string) => createHash("sha256").update(s).digest();

/** Ack callbacks come from the network: call them only if the agent actually asked for one. */
function replier(ack: unknown): (reply: Ack | Record<string, unknown>) => void {
  return typeof ack === "function" ? (reply) => (ack as (r: unknown) => void)(reply) : () => {};
}

/**
 * The agents' only door: Socket.IO namespace /agent. Authenticates the handshake, registers the
 * agent, answers clock pings, and turns frames into entries of the run's Redis stream, acking
 * only once the entry is written so an agent can drop it from its spool. Bad agent input is
 * answered, never thrown.
 */
export function startAgentGateway(opts: AgentGatewayOptions): Server {
  const { db, redis, registry, log } = opts;
  const io = new Server(opts.httpServer, {
    adapter: createAdapter(opts.adapterPub, opts.adapterSub, { key: "volley-agent-gateway" }),
    serveClient: false,
    // Frames carry several encoded histograms; a busy second can exceed the 1 MB default.
    maxHttpBufferSize: 8 * 1024 * 1024,
  });
  const expected = digest(opts.agentToken);
  const nsp = io.of(AGENT_NAMESPACE);

  nsp.use((socket, next) => {
    const auth = (socket.handshake.auth ?? {}) as Record<string, unknown>;
    // Token first (constant-time, on digests so lengths match), so strangers learn nothing about the schema.
    if (typeof auth.token !== "string" || !timingSafeEqual(digest(auth.token), expected)) {
      log.warn({ address: socket.handshake.address }, "rejected agent: invalid token");
      return next(new Error("invalid agent token"));
    }
    const hello = agentHelloSchema.safeParse(auth);
    if (!hello.success) return next(new Error(`invalid agent hello: ${describeIssues(fieldIssues(hello.error))}`));
    upsertAgent(db, hello.data)
      .then((row) => {
        socket.data = { hello: hello.data, agentId: row.id } satisfies AgentSocketData;
        next();
      })
      .catch((err) => {
        log.error({ err: errorMessage(err) }, "could not register agent");
        next(new Error("hub could not register the agent (database unavailable); retrying later may help"));
      });
  });

  nsp.on("connection", (socket: Socket) => {
    const { hello, agentId } = socket.data as AgentSocketData;
    const session = registry.attach(hello, agentId, socket);
    log.info({ agentId, name: hello.name, pool: hello.pool, version: hello.version }, "agent connected");
    socket.emit(AGENT_EVENTS.welcome, { agentId });

    socket.on(AGENT_EVENTS.clockPing, (...args: unknown[]) => replier(args[args.length - 1])({ hubTime: Date.now() }));

    socket.on(AGENT_EVENTS.heartbeat, (payload: unknown, ack: unknown) => {
      const hb = heartbeatSchema.safeParse(payload);
      if (!hb.success) return replier(ack)({ ok: false, error: `invalid heartbeat: ${describeIssues(fieldIssues(hb.error))}` });
      // Refreshes last_seen_at; the status is the registry's, not the agent's opinion of itself.
      registry.emit("heartbeat", session, hb.data);
      replier(ack)({ ok: true });
    });

    socket.on(AGENT_EVENTS.frame, (payload: unknown, ack: unknown) => {
      const reply = replier(ack);
      const frame = frameMessageSchema.safeParse(payload);
      if (!frame.success) return reply({ ok: false, error: `invalid frame: ${describeIssues(fieldIssues(frame.error))}` });
      const { runId } = frame.data;
      redis
        .multi()
        .xadd(REDIS_KEYS.frames(runId), "*", "f", JSON.stringify(frame.data))
        .sadd(REDIS_KEYS.activeRuns, runId)
        .exec()
        .then((results) => {
          const failed = results?.find(([err]) => err);
          if (!results || failed) throw failed?.[0] ?? new Error("transaction discarded");
          reply({ ok: true });
        })
        .catch((err) => {
          log.error({ runId, err: errorMessage(err) }, "could not store frame");
          reply({ ok: false, error: "hub could not store the frame (Redis unavailable); keep it and resend" });
        });
    });

    socket.on(AGENT_EVENTS.shardEnd, (payload: unknown, ack: unknown) => {
      const reply = replier(ack);
      const end = shardEndSchema.safeParse(payload);
      if (!end.success) return reply({ ok: false, error: `invalid shard.end: ${describeIssues(fieldIssues(end.error))}` });
      const current = registry.bySocket(socket);
      if (!current?.lease || current.lease.shardId !== end.data.shardId) {
        return reply({ ok: false, error: `shard ${end.data.shardId} is not running on this agent` });
      }
      current.lease.ended.resolve(end.data);
      reply({ ok: true });
    });

    socket.on("disconnect", (reason) => {
      log.info({ agentId, name: hello.name, reason }, "agent disconnected");
      registry.detach(socket, reason);
    });
  });

  return io;
}
