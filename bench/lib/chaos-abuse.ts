/**
 * The agent-abuse cases of bench/chaos-soak.ts (issue 31): a second organization ("org B", an
 * account of its own with a join token) whose agents misbehave against the shared hub, through the
 * address a remote agent uses (web's /hub relay), while org A's runs go on. Each episode is bounded
 * in time and count and says what the hub answered; the soak then checks that org A's runs were
 * untouched (abuse never excuses one of A's failures), that B's run ended saying why, that B's agent
 * rows stayed bounded, and that the stack still serves.
 *
 * Episodes:
 * - `bomb`: B's agent takes a shard of B's own run (so its frames are past the lease check and
 *   reach decoding) and sends, as fast as the hub acknowledges, for `ms`, the frames of the hub's own
 *   abuse test (apps/hub/src/test-support/abusive-agent.ts): maximal valid histograms (the costliest
 *   to check), decompression bombs, malformed encodings and a 7 MB bomb;
 * - `garbage`: frames and shard ends that fit no schema (wrong types, 7 MB strings, unknown shards);
 * - `flood`: one valid join token opening many agent sockets, each a distinct agent;
 * - `badToken`: handshakes with a wrong token.
 */
import { io, type Socket } from "socket.io-client";
import { AGENT_EVENTS, MIN_AGENT_VERSION, agentEndpoint, planSchema, type Ack, type AgentHello, type ShardJob } from "@volley/contracts";
import { abusiveFrame, type AbuseKind as AbusiveHistograms } from "../../apps/hub/src/test-support/abusive-agent";

export type AbuseKind = "bomb" | "garbage" | "flood" | "badToken";
export const ABUSE_KINDS: readonly AbuseKind[] = ["bomb", "garbage", "flood", "badToken"];

export interface AbuseEpisode {
  at: number;
  kind: AbuseKind;
  ms: number;
  /** What the hub did, counted: acks ok/refused, handshakes welcomed/refused, disconnects by the hub. */
  outcome: Record<string, number>;
  /** A few distinct refusal and disconnect texts, as the hub said them. */
  said: string[];
  /** bomb: B's run the abusive agent held a shard of. */
  runId?: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** What B's frames carry, in turn: the hub's own abuse test's frames (maximal valid histograms, bombs, garbage). */
const FRAME_KINDS: readonly AbusiveHistograms[] = ["maximal", "bomb", "maximal", "malformed", "oversize"];

export interface AbuseTarget {
  /** Web's origin (the soak's stack), e.g. http://localhost:3000. */
  web: string;
  /** B's join token secret (pool `abuse`). */
  joinToken: string;
  /**
   * A second join token of B's, for the flood alone: the flood fills its token's HUB_MAX_AGENTS_PER_TOKEN
   * rows, which stay (offline agents are kept AGENT_RETENTION_DAYS), and would lock the other episodes out.
   */
  floodToken: string;
  /** B's session cookie (to create B's run). */
  cookie: string;
}

function hello(token: string, name: string, n = 0): AgentHello {
  return {
    token,
    instanceId: `${name}-${n}-${Math.random().toString(36).slice(2)}`,
    agentKey: `abuse-${name}-${n}-${Math.random().toString(36).slice(2, 10)}`,
    name: `${name}-${n}`,
    version: MIN_AGENT_VERSION,
    pool: "abuse",
    labels: {},
    capacity: { cores: 2, memoryMb: 2048, maxConnections: 10_000, sourceAddresses: [] },
  };
}

/** One agent socket through web's /hub relay; resolves with the socket on welcome, or the hub's refusal text. */
function dial(web: string, h: AgentHello): Promise<{ socket: Socket } | { refused: string }> {
  const endpoint = agentEndpoint(`${web}/hub`);
  const socket = io(endpoint.url, { path: endpoint.path, auth: h, transports: ["websocket"], reconnection: false, timeout: 5000 });
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      socket.close();
      resolve({ refused: "no welcome within 5 s" });
    }, 5000);
    socket.once(AGENT_EVENTS.welcome, () => {
      clearTimeout(timer);
      resolve({ socket });
    });
    socket.once("connect_error", (err) => {
      clearTimeout(timer);
      socket.close();
      resolve({ refused: err.message });
    });
  });
}

class Tally {
  readonly outcome: Record<string, number> = {};
  readonly said = new Set<string>();
  count(key: string, text?: string): void {
    this.outcome[key] = (this.outcome[key] ?? 0) + 1;
    if (text && this.said.size < 8) this.said.add(text.slice(0, 240));
  }
  /** `of`: what was sent (a frame kind), so a valid frame's ack is told from a bomb's. */
  ack(a: Ack | null, err?: unknown, of?: string): void {
    const key = (k: string) => (of ? `${of}: ${k}` : k);
    if (err) this.count(key("ack timeout or disconnect"), err instanceof Error ? err.message : String(err));
    else if (a?.ok) this.count(key("acked ok"));
    else this.count(key(a && "permanent" in a && a.permanent ? "refused (permanent)" : "refused"), a && !a.ok ? a.error : undefined);
  }
}

async function emit(socket: Socket, event: string, body: unknown, t: Tally, of?: string): Promise<void> {
  try {
    t.ack((await socket.timeout(5000).emitWithAck(event, body)) as Ack, undefined, of);
  } catch (err) {
    t.ack(null, err, of);
  }
}

/** B's run: a small ws echo on the demo target, in B's pool `abuse`, that B's abusive agent will hold. */
const B_PLAN = planSchema.parse({
  name: "abuse: org B's run",
  target: { url: "ws://127.0.0.1:9001/echo", protocol: "ws" },
  connections: { count: 2, rate: 10 },
  scenario: { kind: "echo", message: { bytes: 32, rate: 1 }, duration: "20s" },
  agents: { pool: "abuse", count: 1 },
});

async function bomb(target: AbuseTarget, ms: number, t: Tally): Promise<string | undefined> {
  const dialled = await dial(target.web, hello(target.joinToken, "bomber"));
  if ("refused" in dialled) return void t.count("handshake refused", dialled.refused);
  const { socket } = dialled;
  socket.on("disconnect", (reason) => t.count(`disconnected (${reason})`));
  const assigned = new Promise<ShardJob>((resolve) =>
    socket.on(AGENT_EVENTS.shardAssign, (job: ShardJob, ack: (a: Ack) => void) => {
      ack({ ok: true });
      resolve(job);
    }),
  );
  const started = new Promise<void>((resolve) => socket.once(AGENT_EVENTS.shardStart, () => resolve()));
  let runId: string | undefined;
  try {
    const res = await fetch(`${target.web}/api/v1/runs`, {
      method: "POST",
      headers: { origin: target.web, cookie: target.cookie, "content-type": "application/json" },
      body: JSON.stringify({ plan: B_PLAN }),
      signal: AbortSignal.timeout(10_000),
    });
    const body = (await res.json().catch(() => ({}))) as { id?: string; error?: { message?: string } };
    if (res.status !== 201 || !body.id) {
      t.count(`B's run refused (${res.status})`, body.error?.message);
      return;
    }
    runId = body.id;
    const job = await Promise.race([assigned, sleep(60_000).then(() => null)]);
    if (!job) return void t.count("no shard assigned within 60 s");
    await Promise.race([started, sleep(30_000)]);
    const end = Date.now() + ms;
    for (let seq = 0; Date.now() < end && socket.connected; seq++) {
      const kind = FRAME_KINDS[seq % FRAME_KINDS.length]!;
      await emit(socket, AGENT_EVENTS.frame, abusiveFrame({ runId: job.runId, shardId: job.shardId, agentId: "abuse" }, seq, kind), t, kind);
    }
  } finally {
    socket.close();
  }
  return runId;
}

async function garbage(target: AbuseTarget, ms: number, t: Tally): Promise<void> {
  const dialled = await dial(target.web, hello(target.joinToken, "garbage"));
  if ("refused" in dialled) return void t.count("handshake refused", dialled.refused);
  const { socket } = dialled;
  socket.on("disconnect", (reason) => t.count(`disconnected (${reason})`));
  const huge = "x".repeat(7 * 1024 * 1024);
  const bodies: unknown[] = [
    "not an object",
    { runId: 1, seq: "x" },
    { runId: "run_nobody", shardId: "shd_nobody", agentId: "a", seq: 0, index: 0, startedAt: 0, durationMs: 1, warmup: false, counters: {}, histograms: { a: huge }, health: {} },
    { runId: "run_nobody", shardId: "shd_nobody", status: "completed", frames: 1e9 },
  ];
  const end = Date.now() + ms;
  try {
    for (let i = 0; Date.now() < end && socket.connected; i++)
      await emit(socket, i % 4 === 3 ? AGENT_EVENTS.shardEnd : AGENT_EVENTS.frame, bodies[i % bodies.length], t);
  } finally {
    socket.close();
  }
}

async function flood(target: AbuseTarget, sockets: number, t: Tally): Promise<void> {
  const open: Socket[] = [];
  try {
    for (let i = 0; i < sockets; i += 20) {
      const batch = await Promise.all(Array.from({ length: Math.min(20, sockets - i) }, (_, k) => dial(target.web, hello(target.floodToken, "flood", i + k))));
      for (const d of batch) {
        if ("socket" in d) {
          open.push(d.socket);
          t.count("welcomed");
        } else t.count("refused", d.refused);
      }
    }
    await sleep(2000);
  } finally {
    for (const s of open) s.close();
  }
}

async function badToken(target: AbuseTarget, attempts: number, t: Tally): Promise<void> {
  for (let i = 0; i < attempts; i += 20) {
    const batch = await Promise.all(Array.from({ length: Math.min(20, attempts - i) }, (_, k) => dial(target.web, hello(`vat_wrong${i + k}`, "badtoken", i + k))));
    for (const d of batch) {
      if ("socket" in d) {
        d.socket.close();
        t.count("welcomed (should not be)");
      } else t.count("refused", d.refused);
    }
  }
}

/** Runs one episode of `kind`, bounded: bomb and garbage for `ms`, flood 300 sockets, badToken 200 handshakes. */
export async function abuse(kind: AbuseKind, target: AbuseTarget, ms = 15_000): Promise<AbuseEpisode> {
  const at = Date.now();
  const t = new Tally();
  let runId: string | undefined;
  try {
    if (kind === "bomb") runId = await bomb(target, ms, t);
    else if (kind === "garbage") await garbage(target, ms, t);
    else if (kind === "flood") await flood(target, 300, t);
    else await badToken(target, 200, t);
  } catch (err) {
    t.count("episode failed", err instanceof Error ? err.message : String(err));
  }
  return { at, kind, ms: Date.now() - at, outcome: t.outcome, said: [...t.said], ...(runId ? { runId } : {}) };
}
