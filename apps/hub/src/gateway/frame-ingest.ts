import type { Socket } from "socket.io";
import type { Logger } from "pino";
import { AGENT_EVENTS, describeIssues, fieldIssues, frameMessageSchema, type Ack } from "@volley/contracts";
import { recordAudit, type Db } from "@volley/db";
import { encodedHistogramError } from "@volley/metrics";
import { errorMessage, seconds } from "../util/wait";
import { LogThrottle } from "../util/log-throttle";
import type { AgentRegistry, AgentSession } from "./agent-registry";
import type { FrameWriter } from "./frame-writer";
import type { IngestBudget, Overdrawn } from "./ingest-budget";
import { shardOwnershipError } from "./shard-ownership";

/** One connected agent as the frame path sees it (one per socket). */
export interface IngestAgent {
  socket: Socket;
  session: AgentSession;
  agentId: string;
  name: string;
  orgId: string;
  tokenId: string | null;
  address: string;
  /** What its reconnects are recognised by while it is cut off (org and persisted id or instance id). */
  identity: string[];
  /** Set once the agent is cut off: every later frame on the socket is answered with it, unread. */
  cutOff: string | null;
  /** Shards the database said are not this agent's (asked once per socket, not per frame). */
  notOwned: Map<string, string>;
}

export interface FrameIngestOptions {
  db: Db;
  registry: AgentRegistry;
  frames: FrameWriter;
  budget: IngestBudget;
  recordStart: (report: { runId: string; shardId: string; agentId: string; agentName: string; plannedAt: number; startedAt: number }) => Promise<void>;
  log: Logger;
}

/** The identity keys IngestBudget.block remembers a cut-off agent by. */
export function agentIdentity(orgId: string, hello: { agentKey?: string; instanceId: string }): string[] {
  return [`${orgId}\ni:${hello.instanceId}`, ...(hello.agentKey ? [`${orgId}\nk:${hello.agentKey}`] : [])];
}

/**
 * Turns an agent's frames into stream entries, spending no more of the hub's event loop on one
 * agent or org than IngestBudget allows. Cheapest checks first: the shape, the total size of its
 * histograms and the bytes budget, then whether the shard is the agent's (in memory while it holds
 * the lease), and only then the histograms are inflated (under a cap) and read, timed. An agent that
 * overdraws a budget, or sends too many refused frames, is cut off: its shard errors with the
 * reason, it is disconnected and its reconnects refused for a while, named in the log and the
 * audit log. Nothing of another agent is touched.
 */
export class FrameIngest {
  private readonly cutOffLog = new LogThrottle();

  constructor(private readonly opts: FrameIngestOptions) {}

  async handle(agent: IngestAgent, payload: unknown): Promise<Ack> {
    if (agent.cutOff) return { ok: false, error: agent.cutOff, permanent: true };
    const { budget, db, registry, log } = this.opts;
    const started = performance.now();
    const frame = frameMessageSchema.safeParse(payload);
    if (!frame.success) return this.refuse(agent, `invalid frame: ${describeIssues(fieldIssues(frame.error))}`, started);
    const { runId, shardId, start, histograms } = frame.data;
    let bytes = 0;
    for (const encoded of Object.values(histograms)) bytes += encoded.length;
    const overBytes = budget.spendBytes(agent.agentId, agent.orgId, bytes);
    if (overBytes) return this.cutOffAck(agent, overBytes);
    const cap = budget.limits.maxFrameHistogramBytes;
    if (bytes > cap)
      return this.refuse(agent, `invalid frame: its histograms total ${bytes} bytes encoded, over HUB_MAX_FRAME_HISTOGRAM_BYTES=${cap}`, started);
    const overMs = budget.spendMs(agent.agentId, agent.orgId, performance.now() - started);
    if (overMs) return this.cutOffAck(agent, overMs);

    // A report on a shard this agent was not given would corrupt another agent's measurements; and
    // whoever sends frames without a lease is refused before anything is inflated.
    const current = registry.bySocket(agent.socket) ?? agent.session;
    const key = `${runId}\n${shardId}`;
    const leased = current.lease?.runId === runId && current.lease.shardId === shardId;
    const refused = leased ? null : (agent.notOwned.get(key) ?? (await shardOwnershipError(db, current, runId, shardId)));
    if (refused) {
      if (!current.lease) {
        if (agent.notOwned.size >= 64) agent.notOwned.clear();
        agent.notOwned.set(key, refused);
      }
      log.warn({ agentId: agent.agentId, runId, shardId, error: refused }, "refused a frame for a shard not leased to the agent");
      return this.refuse(agent, refused);
    }
    if (agent.cutOff) return { ok: false, error: agent.cutOff, permanent: true };
    const before = budget.spendMs(agent.agentId, agent.orgId, 0);
    if (before) return this.cutOffAck(agent, before);

    // Every histogram is read (inflated under a cap) before the frame is stored: a malformed one or a
    // decompression bomb is refused here, once, not by every reader of the run forever after. Each is
    // timed and charged on its own, so an agent out of budget stops costing the loop mid-frame.
    for (const [metric, encoded] of Object.entries(histograms)) {
      const decodeStarted = performance.now();
      const error = encodedHistogramError(encoded);
      const over = budget.spendMs(agent.agentId, agent.orgId, performance.now() - decodeStarted);
      if (error) {
        log.warn({ agentId: agent.agentId, runId, shardId, metric, error }, "refused a frame with an unreadable histogram");
        if (over) return this.cutOffAck(agent, over);
        return this.refuse(agent, `invalid frame: histograms.${metric}: ${error}`);
      }
      if (over) return this.cutOffAck(agent, over);
    }
    try {
      // A shard's first frame carries its measured start; recorded before the ack, so a failure means a resend.
      if (start) await this.opts.recordStart({ runId, shardId, agentId: agent.agentId, agentName: agent.name, ...start });
      // Attributed to the authenticated agent, whatever the payload claims (per-agent views group by it).
      await this.opts.frames.append(runId, JSON.stringify({ ...frame.data, agentId: agent.agentId }));
      return { ok: true };
    } catch (err) {
      log.error({ runId, err: errorMessage(err) }, "could not check or store frame");
      return { ok: false, error: "hub could not store the frame (Redis or PostgreSQL unavailable); keep it and resend" };
    }
  }

  /** A permanent refusal, counted against the agent (and `started`: the time its checks took). */
  private refuse(agent: IngestAgent, error: string, started?: number): Ack {
    const { budget } = this.opts;
    const over =
      (started === undefined ? null : budget.spendMs(agent.agentId, agent.orgId, performance.now() - started)) ?? budget.refused(agent.agentId, error);
    if (over) return this.cutOffAck(agent, over);
    return { ok: false, error, permanent: true };
  }

  private cutOffAck(agent: IngestAgent, over: Overdrawn): Ack {
    return { ok: false, error: this.cutOff(agent, over), permanent: true };
  }

  /**
   * Cuts the agent off (once per socket): its shard on this hub ends errored with the reason, it is
   * told so and disconnected, and its reconnects are refused for cutOffMs; logged (at most once a
   * minute per agent) and recorded in its org's audit log. Returns the reason.
   */
  cutOff(agent: IngestAgent, over: Overdrawn): string {
    if (agent.cutOff) return agent.cutOff;
    const { budget, registry, db, log } = this.opts;
    const reason =
      `agent cut off by the hub for ${seconds(budget.limits.cutOffMs)}: ${over.why}; ` +
      `other agents are not affected — fix what makes this agent send such frames, or ask the hub's operator to raise ${over.setting}`;
    agent.cutOff = reason;
    budget.block(agent.identity, reason);
    const session = registry.bySocket(agent.socket) ?? agent.session;
    const lease = session.lease;
    const fields = {
      agentId: agent.agentId,
      name: agent.name,
      orgId: agent.orgId,
      tokenId: agent.tokenId,
      address: agent.address,
      runId: lease?.runId,
      shardId: lease?.shardId,
      budget: over.setting,
    };
    const { log: logIt, suppressed } = this.cutOffLog.take(agent.agentId);
    if (logIt)
      log.warn({ ...fields, why: over.why, ...(suppressed > 0 ? { alsoCutOffSinceLastLine: suppressed } : {}) }, "cut off an agent over its ingest budget");
    recordAudit(db, { orgId: agent.orgId, actor: `agent:${agent.agentId}`, action: "agent.ingest_cut_off", runId: lease?.runId ?? null }).catch((err) =>
      log.error({ ...fields, err: errorMessage(err) }, "could not record the agent's cut-off in the audit log"),
    );
    if (lease) registry.send(session, AGENT_EVENTS.shardAbort, { shardId: lease.shardId, reason });
    // After the refusal's ack is flushed; the lease ends once the socket is gone, so the freed
    // session is never offered another shard in between.
    setImmediate(() => {
      agent.socket.disconnect(true);
      lease?.lost.resolve(reason);
    });
    return reason;
  }
}
