/**
 * Latency truth: the target holds every echo exactly 25 ms (apps/targets as its own process,
 * `?delay=25`, on core 0); `volley-agent run` (core 1) sends 50 connections × 20 msg/s on a fixed
 * schedule for 20 s. A perfect tool reports p50 = p99 = 25 ms plus loopback time, and sends
 * exactly the planned 20,000 messages. Median of RUNS runs.
 *
 *   node --import tsx bench/latency-truth.ts [runs=3]
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { AGENT_BIN, median, spawnPinned, startTarget } from "./lib/spawn-pinned";

const RUNS = Math.max(1, Math.min(9, Number(process.argv[2] ?? 3)));
const CONNS = 50, RATE = 20, SECONDS = 20, HOLD_MS = 25;
const PLANNED = CONNS * RATE * SECONDS;

interface Summary {
  messages: { sent: number; received: number; lost: number; sendRate: number };
  latency: { p50: number; p99: number; max: number };
  sendLag: { p50: number; p99: number; max: number };
  intervals: { saturated: number };
}

const target = await startTarget();
const dir = mkdtempSync(path.join(tmpdir(), "volley-bench-"));
const planFile = path.join(dir, "latency-truth.yaml");
writeFileSync(planFile, `name: latency truth
target: { url: "${target.url}?delay=${HOLD_MS}" }
connections: { count: ${CONNS}, rate: 5000 }
scenario: { kind: echo, message: { rate: ${RATE}, bytes: 64 }, duration: ${SECONDS}s }
`);

const runs: Summary[] = [];
try {
  for (let run = 1; run <= RUNS; run++) {
    const a = spawnPinned(1, [process.execPath, AGENT_BIN, "run", planFile, "--json"]);
    const code = await a.exited;
    if (code !== 0) throw new Error(`agent exited ${code}: ${a.stderr().slice(-500)}`);
    const s = JSON.parse(a.stdout()) as Summary;
    runs.push(s);
    console.error(`run ${run}: p50 ${s.latency.p50} ms, p99 ${s.latency.p99} ms, sent ${s.messages.sent}/${PLANNED}, sendRate ${s.messages.sendRate}/s, send lag p99 ${s.sendLag.p99} ms, saturated intervals ${s.intervals.saturated}`);
  }
} finally {
  await target.stop();
}

const m = (f: (s: Summary) => number) => median(runs.map(f));
console.log(JSON.stringify({
  runs: RUNS,
  holdMs: HOLD_MS,
  p50: m((s) => s.latency.p50),
  p99: m((s) => s.latency.p99),
  max: m((s) => s.latency.max),
  sendLagP50: m((s) => s.sendLag.p50),
  sendLagP99: m((s) => s.sendLag.p99),
  planned: PLANNED,
  sent: m((s) => s.messages.sent),
  lost: m((s) => s.messages.lost),
  // The summary's sendRate divides by measured time, which includes the wait for the last replies.
  summarySendRate: m((s) => s.messages.sendRate),
  plannedRate: CONNS * RATE,
  saturatedIntervals: m((s) => s.intervals.saturated),
}, null, 2));
