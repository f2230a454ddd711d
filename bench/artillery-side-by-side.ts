/**
 * Artillery 2.0.34 (its `ws` engine, on its own Node 22) side by side with `volley-agent run` on two
 * of the existing benches, in the same invocation, alternating run by run. Artillery and Node 22
 * are installed from npm into bench/.tools/ on first use (bench/lib/artillery.ts).
 *
 *   node --import tsx bench/artillery-side-by-side.ts [runs=3] [echo|latency|all]
 *
 * echo: ws-echo-cpu's load (100 connections, 20,000 msg/s in all, 5 s, 64-byte messages): the
 *   baseline `ws` client, the agent and Artillery, each on core 1, target on core 0. Artillery's ws
 *   engine is closed-loop: a VU sends, waits for the reply (it counts replies only for a `send` with
 *   `capture`/`match`), then thinks. So each of its 100 VUs loops 1,000 times {send + capture,
 *   think 5 ms}: the same 100,000 round trips, at 200/s per VU at best, in practice slower (think +
 *   round trip + timer slack), so its run takes longer than 5 s. CPU per 100k round trips uses the
 *   run window (first VU created .. last VU done, /proc samples) and whole-process CPU
 *   (/usr/bin/time); both include Artillery's worker thread(s), which live in its one process.
 * latency: latency-truth's load (target holds each echo 25 ms; 50 connections × 20 msg/s for 20 s,
 *   20,000 messages planned): the agent vs Artillery. Artillery's ws engine measures no message
 *   latency, so a processor (the custom-metrics route its docs give) times send .. reply into a
 *   histogram; each VU loops for 20 s from its own open. Two Artillery scripts: think 50 ms (the
 *   per-connection interval as written) and think 25 ms (interval minus the hold: needs the
 *   server's latency known in advance).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ARTILLERY_PAYLOAD as PAYLOAD, checkArtillery, counter, RTT_PROCESSOR, rttLoopScript, runArtillery } from "./lib/artillery-run";
import { ECHO_CPU_LOAD, runEchoCpu, type EchoCpuRow } from "./lib/echo-cpu";
import { AGENT_BIN, median, spawnPinned, startTarget } from "./lib/spawn-pinned";

const RUNS = Math.max(1, Math.min(9, Number(process.argv[2] ?? 3)));
const WHAT = process.argv[3] ?? "all";
if (!["echo", "latency", "all"].includes(WHAT)) throw new Error(`second argument must be echo, latency or all (got ${WHAT})`);

const r2 = (x: number) => Math.round(x * 100) / 100;
const r3 = (x: number) => Math.round(x * 1000) / 1000;

async function echoCpu(url: string) {
  const { conns, rate, seconds } = ECHO_CPU_LOAD;
  const perVu = (rate / conns) * seconds;
  const script = `config:
  target: "${url}"
  phases:
    - { duration: 1, arrivalCount: ${conns} }
  ws: { perMessageDeflate: false }
scenarios:
  - engine: ws
    flow:
      - loop:
          - send: { payload: '${PAYLOAD}', capture: { json: "$.p", as: "p" } }
          - think: "${1000 / (rate / conns)}ms"
        count: ${perVu}
`;
  const rows: (EchoCpuRow & { windowSeconds?: number; threads?: number; children?: number })[] = [];
  for (let run = 1; run <= RUNS; run++) {
    console.error(`echo cpu, run ${run} of ${RUNS} (runEchoCpu numbers its single pair "run 1")`);
    // The baseline and the agent exactly as bench/ws-echo-cpu.ts runs them, then Artillery.
    const pair = await runEchoCpu({
      runs: 1,
      baselineName: "baseline ws client",
      baselineArgs: ["bench/baseline/ws-echo-client.ts", url, String(conns), String(rate), String(seconds)],
      planYaml: `name: ws-echo-cpu bench
target: { url: "${url}" }
connections: { count: ${conns}, rate: 10000 }
scenario: { kind: echo, message: { rate: ${rate / conns}, bytes: 64 }, duration: ${seconds}s }
`,
    });
    rows.push(...pair.map((r) => ({ ...r, run })));
    const a = await runArtillery(script);
    checkArtillery(a, "echo");
    const trips = counter(a, "websocket.messages_received");
    rows.push({
      who: "artillery",
      run,
      trips,
      cpu: a.windowCpu,
      per100k: (a.windowCpu * 100_000) / trips,
      whole: a.wholeCpu,
      windowSeconds: a.windowSeconds,
      threads: a.maxThreads,
      children: a.childProcesses,
    });
    console.error(
      `artillery run ${run}: ${trips} round trips (sent ${counter(a, "websocket.messages_sent")}) in ${a.windowSeconds.toFixed(2)} s = ${(trips / a.windowSeconds).toFixed(0)}/s, ${a.windowCpu.toFixed(3)} CPU-s in the run window (whole process ${a.wholeCpu.toFixed(2)}), threads ${a.maxThreads}, child processes ${a.childProcesses}`,
    );
  }
  const med = (who: string, k: "per100k" | "whole" | "trips" | "windowSeconds") => r3(median(rows.filter((r) => r.who === who).map((r) => r[k] ?? NaN)));
  const base = med("baseline ws client", "per100k"),
    agent = med("volley-agent run", "per100k"),
    art = med("artillery", "per100k");
  return {
    load: { ...ECHO_CPU_LOAD, artilleryScript: `100 VUs arriving over 1 s, each ${perVu} × {send + capture, think ${1000 / (rate / conns)} ms}` },
    baseline: { cpuPer100k: base, wholeProcessCpu: med("baseline ws client", "whole"), roundTrips: med("baseline ws client", "trips") },
    agent: { cpuPer100k: agent, wholeProcessCpu: med("volley-agent run", "whole"), roundTrips: med("volley-agent run", "trips") },
    artillery: {
      cpuPer100k: art,
      wholeProcessCpu: med("artillery", "whole"),
      roundTrips: med("artillery", "trips"),
      runWindowSeconds: med("artillery", "windowSeconds"),
    },
    ratios: { agentToBaseline: r3(agent / base), artilleryToBaseline: r3(art / base), artilleryToAgent: r3(art / agent) },
    perRun: rows,
  };
}

interface AgentSummary {
  messages: { sent: number; received: number; lost: number };
  latency: { p50: number; p99: number; max: number };
  sendLag: { p99: number };
}
interface HoldSummary {
  count: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

async function latencyTruth(url: string) {
  const CONNS = 50,
    RATE = 20,
    SECONDS = 20,
    HOLD_MS = 25,
    PLANNED = CONNS * RATE * SECONDS;
  const interval = 1000 / RATE;
  const heldUrl = `${url}?delay=${HOLD_MS}`;
  const statsUrl = url.replace(/^ws:/, "http:").replace(/\/echo$/, "/stats");
  // The target's own record of the holds it applied (GET /stats), where this build of apps/targets has it.
  const holds = async (method: "GET" | "DELETE") => {
    try {
      const res = await fetch(statsUrl, { method });
      return method === "GET" && res.ok ? ((await res.json()) as { hold: HoldSummary }).hold : undefined;
    } catch {
      return undefined;
    }
  };
  const dir = mkdtempSync(path.join(tmpdir(), "volley-bench-"));
  const planFile = path.join(dir, "latency-truth.yaml");
  writeFileSync(
    planFile,
    `name: latency truth
target: { url: "${heldUrl}" }
connections: { count: ${CONNS}, rate: 5000 }
scenario: { kind: echo, message: { rate: ${RATE}, bytes: 64 }, duration: ${SECONDS}s }
`,
  );
  const script = (think: number) => rttLoopScript(heldUrl, { conns: CONNS, seconds: SECONDS, thinkMs: think });
  const variants = [
    { who: `artillery think ${interval} ms`, think: interval },
    { who: `artillery think ${interval - HOLD_MS} ms`, think: interval - HOLD_MS },
  ];
  type Row = { who: string; run: number; p50: number; p99: number; max: number; sent: number; received: number; hold?: HoldSummary };
  const rows: Row[] = [];
  for (let run = 1; run <= RUNS; run++) {
    await holds("DELETE");
    const a = spawnPinned(1, [process.execPath, AGENT_BIN, "run", planFile, "--json"]);
    const code = await a.exited;
    if (code !== 0) throw new Error(`agent exited ${code}: ${a.stderr().slice(-500)}`);
    const s = JSON.parse(a.stdout()) as AgentSummary;
    rows.push({
      who: "volley-agent run",
      run,
      p50: s.latency.p50,
      p99: s.latency.p99,
      max: s.latency.max,
      sent: s.messages.sent,
      received: s.messages.received,
      hold: await holds("GET"),
    });
    for (const v of variants) {
      await holds("DELETE");
      const art = await runArtillery(script(v.think), { processor: { file: "rtt.mjs", source: RTT_PROCESSOR }, limitMs: 90_000 });
      checkArtillery(art, v.who);
      const rtt = art.aggregate.summaries?.ws_rtt_ms;
      if (!rtt) throw new Error(`artillery (${v.who}) reported no ws_rtt_ms summary: ${art.stderr.slice(-500)}`);
      rows.push({
        who: v.who,
        run,
        p50: rtt.p50,
        p99: rtt.p99,
        max: rtt.max,
        sent: counter(art, "websocket.messages_sent"),
        received: counter(art, "websocket.messages_received"),
        hold: await holds("GET"),
      });
    }
    for (const r of rows.filter((x) => x.run === run)) {
      const h = r.hold ? ` | target hold p50 ${r.hold.p50Ms} / p99 ${r.hold.p99Ms} ms` : "";
      console.error(
        `${r.who} run ${run}: p50 ${r2(r.p50)} / p99 ${r2(r.p99)} / max ${r2(r.max)} ms, sent ${r.sent}/${PLANNED} (${((100 * r.sent) / PLANNED).toFixed(2)} %), received ${r.received}${h}`,
      );
    }
  }
  const summary = Object.fromEntries(
    ["volley-agent run", ...variants.map((v) => v.who)].map((who) => {
      const mine = rows.filter((r) => r.who === who);
      const m = (f: (r: Row) => number | undefined) => r2(median(mine.map((r) => f(r) ?? NaN)));
      return [
        who,
        {
          p50: m((r) => r.p50),
          p99: m((r) => r.p99),
          max: m((r) => r.max),
          sent: m((r) => r.sent),
          sentOfPlanned: r3(m((r) => r.sent) / PLANNED),
          targetHoldP50: m((r) => r.hold?.p50Ms),
          targetHoldP99: m((r) => r.hold?.p99Ms),
        },
      ];
    }),
  );
  return { load: { conns: CONNS, rate: RATE, seconds: SECONDS, holdMs: HOLD_MS, planned: PLANNED }, ...summary, perRun: rows };
}

/** A fresh target per part, as each bench starts its own; extraEnv as bench/latency-truth.ts sets it. */
async function withTarget<T>(extraEnv: NodeJS.ProcessEnv, f: (url: string) => Promise<T>): Promise<T> {
  const target = await startTarget(extraEnv);
  try {
    return await f(target.url);
  } finally {
    await target.stop();
  }
}

const out: Record<string, unknown> = { runs: RUNS };
if (WHAT !== "latency") out.echoCpu = await withTarget({}, echoCpu);
// Precise holds (latency-truth's default) release each echo within µs of 25 ms; they keep core 0 busy, which the target owns.
if (WHAT !== "echo") out.latencyTruth = await withTarget({ ECHO_HOLD: "precise" }, latencyTruth);
console.log(JSON.stringify(out, null, 2));
