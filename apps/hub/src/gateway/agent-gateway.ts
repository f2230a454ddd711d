import type { Server as HttpServer } from "node:http";
import { Server, type Socket } from "socket.io";
import { createAdapter } from "@socket.io/redis-adapter";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import {
  AGENT_EVENTS,
  AGENT_NAMESPACE,
  describeIssues,
  fieldIssues,
  heartbeatSchema,
  isLoopbackAddress,
  shardEndSchema,
  type Ack,
  type AgentHello,
  type TargetPolicy,
  type Welcome,
} from "@volley/contracts";
import { AgentInstanceConflictError, AgentKeyConflictError, recordAudit, touchAgentToken, upsertAgent, type Db } from "@volley/db";
import { errorMessage } from "../util/wait";
import { poolKey } from "../shards/pool-key";
import { createAdmission } from "./agent-admission";
import { FrameWriter } from "./frame-writer";
import { describeAgent, type AgentRegistry } from "./agent-registry";
import { heldShardRefusal } from "./shard-ownership";
import { agentRowRefusal, orgAccounts, serializeByKey } from "./agent-limits";
import { agentIdentity, FrameIngest, type IngestAgent } from "./frame-ingest";
import { DEFAULT_INGEST_LIMITS, IngestBudget, type IngestLimits } from "./ingest-budget";
import { LogThrottle } from "../util/log-throttle";

export interface AgentGatewayOptions {
  httpServer: HttpServer;
  db: Db;
  /** Command connection: XADD of frames. */
  redis: Redis;
  /** Two dedicated connections for the Socket.IO Redis adapter (one of them subscribes). */
  adapterPub: Redis;
  adapterSub: Redis;
  /** The shared bootstrap token (self-hosted); null/undefined: only join tokens admit agents. */
  agentToken?: string | null;
  /** Sent to every agent in its welcome: hosted agents refuse non-public target addresses. */
  targetPolicy?: TargetPolicy;
  registry: AgentRegistry;
  /**
   * Reserves the pool (key) an admitted agent joins, before it is registered: null, or why the
   * agent is refused (its org, or the account owning it, holds as many pools as this hub allows).
   * `account`: the org's owner (orgAccounts). Absent: no limit.
   */
  admitPool?: (org: { orgId: string; account: string }, pool: string) => string | null;
  /** Agents rows one token may have (HUB_MAX_AGENTS_PER_TOKEN); a hello that would add one more is refused. Absent: no limit. */
  maxAgentsPerToken?: number;
  /** What agents' frames may cost this hub (HUB_INGEST_*); absent: DEFAULT_INGEST_LIMITS. */
  ingest?: IngestLimits;
  /** Records an agent's actual start of a shard on the run (coordination state, read at finalize). */
  recordStart: (report: { runId: string; shardId: string; agentId: string; agentName: string; plannedAt: number; startedAt: number }) => Promise<void>;
  log: Logger;
}

interface AgentSocketData {
  hello: AgentHello;
  agentId: string;
  /** The join token that admitted the agent (re-checked at every heartbeat); null for the bootstrap token. */
  tokenId: string | null;
  orgId: string;
  /** The shard its hello named but may not resume (not its own): the agent is told to drop it. */
  refusedShard: { shardId: string; reason: string } | null;
  /** IngestBudget's keys for this agent (frame-ingest agentIdentity). */
  identity: string[];
}

/**
 * The agent's address as the hub reports it: the TCP peer, unless the peer is loopback and names a
 * forwarded address, which is web relaying an agent from another host (web's hub-relay.ts writes
 * X-Forwarded-For itself, replacing any the agent sent). A loopback peer is this machine: whoever
 * runs there could reach the hub directly anyway.
 */
function agentAddress(socket: Socket): string {
  const peer = socket.handshake.address;
  const forwarded = socket.handshake.headers["x-forwarded-for"];
  if (typeof forwarded !== "string" || !isLoopbackAddress(peer)) return peer;
  return forwarded.split(",").at(-1)?.trim() || peer;
}

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
  const { db, registry, log } = opts;
  const budget = new IngestBudget(opts.ingest ?? DEFAULT_INGEST_LIMITS);
  const ingest = new FrameIngest({ db, registry, frames: new FrameWriter(opts.redis), budget, recordStart: opts.recordStart, log });
  const accountOf = orgAccounts(db);
  // One token's hellos in turn: its row count is read and a row added as one step, on this hub.
  const perToken = serializeByKey();
  const io = new Server(opts.httpServer, {
    adapter: createAdapter(opts.adapterPub, opts.adapterSub, { key: "volley-agent-gateway" }),
    serveClient: false,
    // Frames carry several encoded histograms; a busy second can exceed the 1 MB default. A larger
    // message closes the connection unread; below it, FrameIngest caps a frame's histograms at
    // HUB_MAX_FRAME_HISTOGRAM_BYTES (1 MiB) and charges its bytes, so an oversized frame is refused in words.
    maxHttpBufferSize: 8 * 1024 * 1024,
  });
  const admit = createAdmission(db, opts.agentToken);
  // A refused handshake is logged once a minute per address and reason, with how many were left out.
  const refusals = new LogThrottle();
  const nsp = io.of(AGENT_NAMESPACE);

  nsp.use((socket, next) => {
    const auth = (socket.handshake.auth ?? {}) as Record<string, unknown>;
    admit(auth)
      .then(async (admission) => {
        if (!admission.ok) {
          const address = agentAddress(socket);
          const { log: logIt, suppressed } = refusals.take(`${address}\n${admission.log}`);
          if (logIt) log.warn({ address, why: admission.log, ...(suppressed > 0 ? { alsoRefusedSinceLastLine: suppressed } : {}) }, "rejected agent");
          // `data` reaches the agent's connect_error: a permanent refusal lets a new agent stop instead of retrying forever.
          return next(Object.assign(new Error(admission.error), { data: { permanent: admission.permanent === true } }));
        }
        const { orgId, tokenId } = admission.enrollment;
        const identity = agentIdentity(orgId, admission.hello);
        const refusedAs = (why: string) => {
          log.warn({ address: agentAddress(socket), orgId, tokenId, pool: admission.hello.pool, name: admission.hello.name, why }, "rejected agent");
          next(new Error(why));
        };
        // Before anything is written for it: an agent cut off for its frames waits out its cut-off.
        const cutOff = budget.blockedReason(identity);
        if (cutOff) return refusedAs(cutOff);
        const account = opts.admitPool ? await accountOf(orgId) : "";
        const poolRefused = opts.admitPool?.({ orgId, account }, poolKey(orgId, admission.hello.pool)) ?? null;
        if (poolRefused) return refusedAs(poolRefused);
        const max = opts.maxAgentsPerToken;
        const registered = await perToken(tokenId ?? "", async () => {
          const tooMany = max === undefined ? null : await agentRowRefusal(db, admission.hello, admission.enrollment, max);
          return tooMany ?? (await upsertAgent(db, admission.hello, admission.enrollment));
        });
        if (typeof registered === "string") return refusedAs(registered);
        const row = registered;
        let hello = admission.hello;
        let refusedShard: AgentSocketData["refusedShard"] = null;
        // Before the registry sees the hello: it leases a named shard to the agent on attach.
        if (hello.shard) {
          const refusal = await heldShardRefusal(db, { agentId: row.id, orgId }, hello.shard);
          if (refusal) {
            const { shard, ...rest } = hello;
            hello = rest;
            refusedShard = { shardId: shard.shardId, reason: refusal.reason };
            const fields = {
              agentId: row.id,
              name: hello.name,
              orgId,
              tokenId: admission.enrollment.tokenId,
              address: agentAddress(socket),
              runId: shard.runId,
              shardId: shard.shardId,
              why: refusal.audit,
            };
            log.warn(fields, "refused an agent's claim to a shard it was not assigned; telling it to drop the shard");
            // Recorded for the run's org (someone aimed at its run) and for the agent's own.
            const orgs = new Set([refusal.runOrgId, orgId].filter((o): o is string => o !== null));
            for (const org of orgs) {
              await recordAudit(db, {
                orgId: org,
                actor: `agent:${row.id}`,
                action: "agent.shard_claim_refused",
                runId: org === refusal.runOrgId ? shard.runId : null,
              }).catch((err) => log.error({ ...fields, err: errorMessage(err) }, "could not record the refused shard claim in the audit log"));
            }
          }
        }
        socket.data = { hello, agentId: row.id, ...admission.enrollment, refusedShard, identity } satisfies AgentSocketData;
        next();
      })
      .catch((err) => {
        if (err instanceof AgentKeyConflictError) {
          log.warn(
            { address: agentAddress(socket), agentKey: err.agentKey, ownerOrgId: err.ownerOrgId, name: auth.name },
            "refused agent: its persisted id belongs to an agent of another organization",
          );
          return next(
            new Error(
              `agent id taken: this agent's persisted id (${err.agentKey}) belongs to an agent of another Volley organization than its token's; remove that agent there (Agents → Remove), or give this agent a new identity by deleting the agent-id file in its AGENT_STATE_DIR`,
            ),
          );
        }
        if (err instanceof AgentInstanceConflictError) {
          log.warn(
            { address: agentAddress(socket), instanceId: err.instanceId, orgId: err.orgId, name: auth.name },
            "refused agent: its instance id belongs to another agent of its organization (another token or persisted id)",
          );
          return next(
            new Error(
              `agent instance id taken: instanceId ${err.instanceId} belongs to another agent of this Volley organization, enrolled with another join token or persisted id; each agent process sends its own instanceId (a restart makes a new one) — restart this agent`,
            ),
          );
        }
        log.error({ err: errorMessage(err) }, "could not register agent");
        next(new Error("hub could not register the agent (database unavailable); retrying later may help"));
      });
  });

  nsp.on("connection", (socket: Socket) => {
    const { hello, agentId, tokenId, orgId, refusedShard, identity } = socket.data as AgentSocketData;
    const session = registry.attach({ ...hello, pool: poolKey(orgId, hello.pool) }, agentId, socket);
    const ingestAgent: IngestAgent = {
      socket,
      session,
      agentId,
      name: hello.name,
      orgId,
      tokenId,
      address: agentAddress(socket),
      identity,
      cutOff: null,
      notOwned: new Map(),
    };
    // The address tells apart agents that share a name or sit behind one host (e2e/netns-agents asserts it).
    log.info({ agentId, name: hello.name, address: agentAddress(socket), orgId, pool: hello.pool, tokenId, version: hello.version }, "agent connected");
    socket.emit(AGENT_EVENTS.welcome, { agentId, targetPolicy: opts.targetPolicy ?? { mode: "self-hosted" } } satisfies Welcome);
    // Its frames for that shard are refused too (no lease, and the shard row names another agent).
    if (refusedShard) socket.emit(AGENT_EVENTS.shardAbort, refusedShard);

    socket.on(AGENT_EVENTS.clockPing, (...args: unknown[]) => replier(args[args.length - 1])({ hubTime: Date.now() }));

    socket.on(AGENT_EVENTS.heartbeat, (payload: unknown, ack: unknown) => {
      const reply = replier(ack);
      const hb = heartbeatSchema.safeParse(payload);
      if (!hb.success) return reply({ ok: false, error: `invalid heartbeat: ${describeIssues(fieldIssues(hb.error))}` });
      // Now, as it arrives: what the agent holds is compared with the lease as it stands at this point of the stream.
      registry.reconcile(registry.bySocket(socket) ?? session, hb.data);
      if (!tokenId) {
        // Refreshes last_seen_at; the status is the registry's, not the agent's opinion of itself.
        registry.emit("heartbeat", session, hb.data);
        return reply({ ok: true });
      }
      touchAgentToken(db, tokenId)
        .then((live) => {
          if (live) {
            registry.emit("heartbeat", session, hb.data);
            return reply({ ok: true });
          }
          log.warn({ agentId, name: hello.name, tokenId }, "disconnecting agent: its join token was revoked");
          reply({ ok: false, error: "agent token revoked: this agent's join token was revoked; ask an admin of your Volley organization for a new one" });
          // After the ack is flushed; the agent's reconnects are then refused with the same reason.
          setImmediate(() => socket.disconnect(true));
        })
        .catch((err) => {
          // A database blip must not drop working agents: admit until the next heartbeat.
          log.warn({ agentId, err: errorMessage(err) }, "could not check the agent's join token");
          registry.emit("heartbeat", session, hb.data);
          reply({ ok: true });
        });
    });

    socket.on(AGENT_EVENTS.frame, (payload: unknown, ack: unknown) => {
      const reply = replier(ack);
      ingest.handle(ingestAgent, payload).then(reply, (err) => {
        log.error({ agentId, err: errorMessage(err) }, "could not check or store frame");
        reply({ ok: false, error: "hub could not store the frame (Redis or PostgreSQL unavailable); keep it and resend" });
      });
    });

    socket.on(AGENT_EVENTS.shardEnd, (payload: unknown, ack: unknown) => {
      const reply = replier(ack);
      const end = shardEndSchema.safeParse(payload);
      if (!end.success) return reply({ ok: false, error: `invalid shard.end: ${describeIssues(fieldIssues(end.error))}`, permanent: true });
      const current = registry.bySocket(socket);
      const { runId, shardId } = end.data;
      if (!current?.lease || current.lease.shardId !== shardId || current.lease.runId !== runId) {
        const holds = current?.lease ? `it holds shard ${current.lease.shardId} of run ${current.lease.runId}` : "it holds no shard on this hub";
        // On a connected socket a lease is never coming back (a resumed shard is leased at the hello).
        return reply({
          ok: false,
          error: `shard.end refused: shard ${shardId} of run ${runId} is not leased to ${describeAgent(session)} (${holds})`,
          permanent: true,
        });
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
