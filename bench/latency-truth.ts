/**
 * Latency truth: the target holds every echo 25 ms (apps/targets as its own process, `?delay=25`,
 * on core 0); `volley-agent run` (core 1) sends 50 connections × 20 msg/s on a fixed schedule for
 * 20 s. A perfect tool reports the target's true hold plus loopback, and sends exactly the planned
 * 20,000 messages.
 *
 * Each run is a pair at the same load on a fresh target process: first `?delay=25`, for which the
 * target itself reports every hold it actually applied (arrival to send call, its GET /stats), then
 * `?delay=0` (the loopback: what the agent reports for an undelayed echo). The goal compares the
 * agent's p50/p99 with true hold + loopback at the same percentile, read from the convolution of
 * the two whole distributions (the target's hold buckets and the loopback run's merged HdrHistogram,
 * from `--frames`): percentiles of a sum are not sums of percentiles. Median of RUNS pairs.
 *
 * Each run also times the same load with a minimal hand-written open-loop `ws` client
 * (bench/baseline/ws-latency-client.ts) on a fresh target of its own: the least any Node client
 * can do on this machine. Agent minus baseline is what the engine itself adds; what the baseline
 * shows above the truth is Node's and the machine's (see bench/machine-floor.ts).
 *
 * The target runs with ECHO_HOLD=precise (holds released within µs of their deadline, core 0
 * kept busy); `timer` shows the default whole-millisecond hold instead.
 *
 * `flow` (issue 16) runs the same load as a plan flow: every message a text frame of JSON built from
 * a template (`{ id: "{{ msg.id }}", seq: "{{ msg.seq }}", pad }`, ~64 bytes) and its reply matched
 * by `$.id` equal to the message's id, in the held, loopback and baseline runs alike (the baseline
 * sends the same JSON and matches by parsing `$.id`). Goal: within 0.25 ms of truth at p50 and p99
 * (the binary default's goal, issue 3, is 1 ms).
 *
 * `users` (issue 28) runs virtual users instead of connections: 10 arrive a second for 20 s, each
 * connects and sends 50 such JSON messages, each waiting for its reply (matched by id, its seq
 * captured), then thinks 20–60 ms (uniform) before the next: ~10,000 messages from ~40 users at
 * once. Every send is timed from its intended instant (the previous reply plus the think), so the
 * same goal holds at p50 (issue 28: within 0.25 ms of truth); p99 is reported. The baseline client
 * runs the flow's load (connections, not users): its p99 is no like-for-like comparison.
 *
 *   node --import tsx bench/latency-truth.ts [runs=3] [precise|timer] [binary|flow|users]
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { readFileSync } from "node:fs";
import { COUNTERS, HISTOGRAMS, intervalFrameSchema } from "@volley/contracts";
import { mergeEncoded } from "@volley/metrics";
import { convolvedPercentilesMs, type Buckets } from "./lib/convolve";
import { AGENT_BIN, median, spawnPinned, startTarget } from "./lib/spawn-pinned";

const RUNS = Math.max(1, Math.min(9, Number(process.argv[2] ?? 3)));
const HOLD_MODE = process.argv[3] ?? "precise";
if (HOLD_MODE !== "precise" && HOLD_MODE !== "timer") throw new Error(`hold mode must be precise or timer (got ${HOLD_MODE})`);
const VARIANT = process.argv[4] ?? "binary";
if (VARIANT !== "binary" && VARIANT !== "flow" && VARIANT !== "users") throw new Error(`variant must be binary, flow or users (got ${VARIANT})`);
/** How far from truth p50 and p99 may be: issue 3's goal for Volley's own messages, issue 16's for flows (and users). */
const GOAL_MS = VARIANT === "binary" ? 1 : 0.25;
const CONNS = 50,
  RATE = 20,
  SECONDS = 20,
  HOLD_MS = 25;
const USERS_PER_SECOND = 10,
  USER_MESSAGES = 50;
const PLANNED = VARIANT === "users" ? USERS_PER_SECOND * SECONDS * USER_MESSAGES : CONNS * RATE * SECONDS;

interface Summary {
  messages: { sent: number; received: number; lost: number; sendRate: number };
  latency: { p50: number; p99: number; max: number };
  sendLag: { p50: number; p99: number; max: number };
  intervals: { saturated: number };
  /** Users only: how the users ended. */
  users?: { started: number; completed: number; failed: number; dropped: number };
  /** Flows only: incoming messages that answered nothing (a reply the match missed). */
  flow?: { unmatched: number };
}
interface HoldSummary {
  count: number;
  minMs: number;
  meanMs: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
}
interface Baseline {
  latency: { p50: number; p99: number; max: number };
  sendLag: { p50: number; p99: number; max: number };
  sent: number;
  hold: HoldSummary;
}
interface Pair {
  loop: Summary;
  held: Summary;
  hold: HoldSummary;
  base: Baseline;
  truth: { p50: number; p99: number };
  steadyRate: number;
}

const dir = mkdtempSync(path.join(tmpdir(), "volley-bench-"));
/**
 * The flow variant's messages: ~64 bytes of JSON like the binary message (an id of ~13 characters:
 * shard tag, connection and seq in base 36), the reply found by its id.
 */
const FLOW_YAML = `flow:
  messages:
    - json: { id: "{{ msg.id }}", seq: "{{ msg.seq }}", pad: "${"x".repeat(23)}" }
      reply: { match: { path: "$.id", equals: "{{ msg.id }}" } }
`;
const USERS_YAML = (url: string, delay: number) => `name: latency truth (delay ${delay} ms, users)
target: { url: "${url}?delay=${delay}" }
connections: { count: 1000 }
scenario: { kind: users, arrivalRate: ${USERS_PER_SECOND}, duration: ${SECONDS}s }
flow:
  steps:
    - connect: {}
    - loop:
        count: ${USER_MESSAGES}
        steps:
          - send:
              json: { id: "{{ msg.id }}", seq: "{{ msg.seq }}", pad: "${"x".repeat(23)}" }
              reply: { match: { path: "$.id", equals: "{{ msg.id }}" } }
              capture: { seq: "$.seq" }
          - think: { min: 20ms, max: 60ms }
`;
const planFor = (url: string, delay: number) => {
  const file = path.join(dir, `latency-truth-${delay}.yaml`);
  if (VARIANT === "users") {
    writeFileSync(file, USERS_YAML(url, delay));
    return file;
  }
  writeFileSync(
    file,
    `name: latency truth (delay ${delay} ms${VARIANT === "flow" ? ", flow" : ""})
target: { url: "${url}?delay=${delay}" }
connections: { count: ${CONNS}, rate: 5000 }
scenario: { kind: echo, message: { rate: ${RATE}, bytes: 64 }, duration: ${SECONDS}s }
${VARIANT === "flow" ? FLOW_YAML : ""}`,
  );
  return file;
};

async function agentRun(planFile: string, framesFile?: string): Promise<Summary> {
  const a = spawnPinned(1, [process.execPath, AGENT_BIN, "run", planFile, "--json", ...(framesFile ? ["--frames", framesFile] : [])]);
  const code = await a.exited;
  if (code !== 0) throw new Error(`agent exited ${code}: ${a.stderr().slice(-500)}`);
  return JSON.parse(a.stdout()) as Summary;
}

const readFrames = (framesFile: string) =>
  readFileSync(framesFile, "utf8")
    .trimEnd()
    .split("\n")
    .map((l) => intervalFrameSchema.parse(JSON.parse(l)));

/** The run's round-trip histogram, merged from every frame the agent wrote with --frames. */
const mergedLatency = (framesFile: string) => mergeEncoded(readFrames(framesFile).flatMap((f) => f.histograms[HISTOGRAMS.messageLatency] ?? []));

/**
 * The achieved rate while the whole population sends: mean messages sent per full second, over the
 * seconds wholly inside the schedule (the first, in which connections still open, and the last,
 * partial one left out). The summary's sendRate divides by the whole sending window instead, which
 * includes the ~30 ms in which the 50 connections open.
 */
function steadySendRate(framesFile: string): number {
  const full = readFrames(framesFile).filter((f) => f.index >= 1 && f.durationMs >= 999 && (f.activeMs ?? f.durationMs) >= f.durationMs);
  return full.reduce((n, f) => n + (f.counters[COUNTERS.sent] ?? 0), 0) / Math.max(1, full.length);
}

async function targetHolds(statsUrl: string): Promise<{ hold: HoldSummary; buckets: Buckets }> {
  const res = await fetch(statsUrl);
  if (!res.ok) throw new Error(`GET ${statsUrl}: HTTP ${res.status}`);
  return (await res.json()) as { hold: HoldSummary; buckets: Buckets };
}

async function baselineRun(): Promise<Baseline> {
  const target = await startTarget({ ECHO_HOLD: HOLD_MODE });
  try {
    const b = spawnPinned(1, [
      process.execPath,
      "--import",
      "tsx",
      "bench/baseline/ws-latency-client.ts",
      `${target.url}?delay=${HOLD_MS}`,
      String(CONNS),
      String(RATE),
      String(SECONDS),
      VARIANT === "binary" ? "binary" : "json",
    ]);
    const code = await b.exited;
    if (code !== 0) throw new Error(`baseline exited ${code}: ${b.stderr().slice(-500)}`);
    const out = JSON.parse(b.stdout()) as Omit<Baseline, "hold">;
    return { ...out, hold: (await targetHolds(statsUrlOf(target.url))).hold };
  } finally {
    await target.stop();
  }
}

const statsUrlOf = (url: string) => url.replace(/^ws:/, "http:").replace(/\/echo$/, "/stats");
const r2 = (x: number) => Math.round(x * 100) / 100;
const pairs: Pair[] = [];
for (let run = 1; run <= RUNS; run++) {
  // A fresh target per pair: a target process that has served a few runs holds with a wider tail
  // (its GC pauses grow: 20–30 ms scavenges seen with --trace-gc), and that tail is not the agent's.
  const target = await startTarget({ ECHO_HOLD: HOLD_MODE });
  const statsUrl = statsUrlOf(target.url);
  try {
    // The held run first, on the fresh process; the loopback run after it needs no precise target.
    const heldFrames = path.join(dir, `held-${run}.jsonl`);
    const held = await agentRun(planFor(target.url, HOLD_MS), heldFrames);
    const steadyRate = steadySendRate(heldFrames);
    const { hold, buckets } = await targetHolds(statsUrl);
    const loopFrames = path.join(dir, `loopback-${run}.jsonl`);
    const loop = await agentRun(planFor(target.url, 0), loopFrames);
    await target.stop();
    const [t50, t99] = convolvedPercentilesMs(buckets, mergedLatency(loopFrames), [50, 99]);
    const truth = { p50: t50!, p99: t99! };
    // The baseline on a fresh target of its own, like the agent's held run.
    const base = await baselineRun();
    pairs.push({ loop, held, hold, base, truth, steadyRate });
    console.error(
      `run ${run}: reported p50 ${held.latency.p50} / p99 ${held.latency.p99} ms | target hold p50 ${hold.p50Ms} / p99 ${hold.p99Ms} (max ${hold.maxMs}, ${hold.count} replies)` +
        ` + loopback p50 ${loop.latency.p50} / p99 ${loop.latency.p99} = ${truth.p50} / ${truth.p99} ms (convolved; percentile sums ${r2(hold.p50Ms + loop.latency.p50)} / ${r2(hold.p99Ms + loop.latency.p99)})` +
        ` | excess ${r2(held.latency.p50 - truth.p50)} / ${r2(held.latency.p99 - truth.p99)} ms` +
        ` | send lag p99 ${held.sendLag.p99} (loopback run ${loop.sendLag.p99}) ms, sent ${held.messages.sent}/${PLANNED} (steady ${r2(steadyRate)}/s), saturated ${held.intervals.saturated}+${loop.intervals.saturated}` +
        (VARIANT === "flow" ? `, unmatched ${held.flow?.unmatched ?? "?"}+${loop.flow?.unmatched ?? "?"}` : "") +
        ` | baseline p50 ${base.latency.p50} / p99 ${base.latency.p99} ms (its target's hold p99 ${base.hold.p99Ms}), send lag p99 ${base.sendLag.p99}, sent ${base.sent}`,
    );
  } finally {
    await target.stop();
  }
}

const m = (f: (p: Pair) => number) => r2(median(pairs.map(f)));
const truthP50 = m((p) => p.truth.p50);
const truthP99 = m((p) => p.truth.p99);
const excessP50 = m((p) => p.held.latency.p50 - p.truth.p50);
const excessP99 = m((p) => p.held.latency.p99 - p.truth.p99);
console.log(
  JSON.stringify(
    {
      runs: RUNS,
      variant: VARIANT,
      holdMode: HOLD_MODE,
      holdMs: HOLD_MS,
      p50: m((p) => p.held.latency.p50),
      p99: m((p) => p.held.latency.p99),
      max: m((p) => p.held.latency.max),
      // What the target says it held (arrival to send call), and what the agent reports with no hold.
      targetHoldMin: m((p) => p.hold.minMs),
      targetHoldP50: m((p) => p.hold.p50Ms),
      targetHoldP99: m((p) => p.hold.p99Ms),
      targetHoldMax: m((p) => p.hold.maxMs),
      loopbackP50: m((p) => p.loop.latency.p50),
      loopbackP99: m((p) => p.loop.latency.p99),
      // True hold + loopback: percentiles of the convolution of the two distributions.
      truthP50,
      truthP99,
      excessP50,
      excessP99,
      // The old reading, percentile plus percentile: overshoots at p99 (both tails rarely meet in one message).
      percentileSumP50: m((p) => p.hold.p50Ms + p.loop.latency.p50),
      percentileSumP99: m((p) => p.hold.p99Ms + p.loop.latency.p99),
      goalMs: GOAL_MS,
      // Users (issue 28) are held to p50; the others to p50 and p99.
      goalMet: pairs.length > 0 && Math.abs(excessP50) <= GOAL_MS && (VARIANT === "users" || Math.abs(excessP99) <= GOAL_MS),
      // The minimal hand-written client on the same load (its own fresh target).
      baselineP50: m((p) => p.base.latency.p50),
      baselineP99: m((p) => p.base.latency.p99),
      baselineHoldP99: m((p) => p.base.hold.p99Ms),
      baselineSendLagP99: m((p) => p.base.sendLag.p99),
      agentMinusBaselineP50: m((p) => p.held.latency.p50 - p.base.latency.p50),
      agentMinusBaselineP99: m((p) => p.held.latency.p99 - p.base.latency.p99),
      sendLagP50: m((p) => p.held.sendLag.p50),
      sendLagP99: m((p) => p.held.sendLag.p99),
      planned: PLANNED,
      sent: m((p) => p.held.messages.sent),
      lost: m((p) => p.held.messages.lost),
      ...(VARIANT === "flow" ? { unmatched: m((p) => (p.held.flow?.unmatched ?? NaN) + (p.loop.flow?.unmatched ?? NaN)) } : {}),
      // Over sending time only (the frames' activeMs): the wait for the last replies is not sending.
      summarySendRate: m((p) => p.held.messages.sendRate),
      // Mean sent per full second with every connection sending (frames), against plannedRate.
      steadySendRate: m((p) => p.steadyRate),
      plannedRate: VARIANT === "users" ? null : CONNS * RATE,
      saturatedIntervals: m((p) => p.held.intervals.saturated + p.loop.intervals.saturated),
      ...(VARIANT === "users" ? { usersCompleted: m((p) => p.held.users?.completed ?? NaN), usersFailed: m((p) => p.held.users?.failed ?? NaN) } : {}),
    },
    null,
    2,
  ),
);
