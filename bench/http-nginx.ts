/**
 * Plain HTTP against a server that is not the bottleneck (issue 29): Debian's nginx, one process
 * pinned to core 0 (lib/nginx.ts: its own config, a free loopback port, `GET /hello` answered from
 * the config), every client pinned to core 1, alternating run by run in one invocation.
 *
 * keep-alive: 50 users flat out — the agent as a closed loop (`loop: closed`, `requests: 100000`)
 * beside `wrk -t1 -c50` for 5 s. Goal: the agent's CPU per 100k requests ≤ 1.3 × wrk's (the agent's
 * over the run alone, as its CLI reports it; wrk's whole process).
 *
 * new connection per request: 50 users — the agent with `keepAlive: false` as a closed loop of 50
 * (`requests: 20000`) beside `ab -c 50 -n 20000` (no -k). Goal: the agent's rate ≥ 1.0 × ab's.
 *
 * Beside both, the Node runtime's floor (baseline/node-net-http-client.ts): the same closed loops on
 * `node:net` alone, no schedule, histogram or frames. Where the agent sits at that floor, what is
 * left between it and wrk or ab is Node's own socket path, not the agent's work: the summary gives
 * agent ÷ floor and floor ÷ wrk / ab so the two gaps read apart.
 *
 * Each agent row also says in how many of its seconds it flagged itself saturated, and the medians
 * of its engine thread's CPU and event-loop busy share: a closed loop busy over 90 % of a second
 * was the limit itself and flags it. The agent is compiled from the working tree at the start.
 *
 *   node --import tsx bench/http-nginx.ts [runs=3] [all|keepalive|close]
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { buildAgentBundle } from "./lib/agent-bundle";
import { HttpPeers, httpPlan, loadAverage } from "./lib/http-peers";
import { startNginx } from "./lib/nginx";

const RUNS = Math.max(1, Math.min(9, Number(process.argv[2] ?? 3)));
const MODE = process.argv[3] ?? "all";
if (!["all", "keepalive", "close"].includes(MODE)) throw new Error(`mode must be all, keepalive or close (got ${MODE})`);
const USERS = 50;
const KA = { requests: 100_000, wrkSeconds: 5 };
const CLOSE = { requests: 20_000 };
// Fails early, naming the missing tool (apt-get install -y nginx-light wrk apache2-utils).
for (const tool of ["wrk", "ab"]) execFileSync("which", [tool]);

// Compiled from the working tree at the start (lib/agent-bundle.ts), not the bin's tsx fallback.
const agentBin = await buildAgentBundle();
const peers = new HttpPeers(mkdtempSync(path.join(tmpdir(), "volley-http-nginx-")), agentBin);
const nginx = await startNginx(0);
const url = nginx.url;
const plan = (name: string, http: string, requests: number) =>
  httpPlan(name, url, USERS, http, `message: { rate: 1000000, timeout: 10s }, duration: 120s, loop: closed, requests: ${requests}`);

const AGENT_KA = "agent keep-alive, closed loop 50 users";
const WRK = "wrk -t1 -c50 keep-alive";
const AGENT_CLOSE = "agent keepAlive: false, closed loop 50 users";
const AB = "ab -c 50 (new connection per request)";
const FLOOR_KA = "node:net floor keep-alive, closed loop 50 users";
const FLOOR_CLOSE = "node:net floor new connection per request, closed loop 50 users";
const loadAtStart = loadAverage();
try {
  for (let run = 1; run <= RUNS; run++) {
    if (MODE !== "close") {
      await peers.agent(AGENT_KA, run, plan("http keep-alive, closed", "", KA.requests));
      await peers.wrk(WRK, run, url, USERS, KA.wrkSeconds, false);
      await peers.nodeFloor(FLOOR_KA, run, url, USERS, KA.requests, true);
    }
    if (MODE !== "keepalive") {
      await peers.ab(AB, run, url, USERS, CLOSE.requests, false);
      await peers.agent(AGENT_CLOSE, run, plan("http per request, closed", ", keepAlive: false", CLOSE.requests));
      await peers.nodeFloor(FLOOR_CLOSE, run, url, USERS, CLOSE.requests, false);
    }
  }
} finally {
  const errors = nginx.errors().trim();
  if (errors) console.error(`nginx error log:\n${errors.slice(-2000)}`);
  await nginx.stop();
}

const saturated = (who: string) => peers.rows.filter((r) => r.who === who).map((r) => r.extra?.saturatedSeconds);
const summary: Record<string, unknown> = {
  runs: RUNS,
  loadAverage: { atStart: loadAtStart, atEnd: loadAverage() },
  medians: peers.medians(),
};
if (MODE !== "close")
  summary.keepAlive = {
    goal: "agent CPU per 100k <= 1.3 x wrk's",
    agentOverWrkCpuPer100k: peers.ratio(AGENT_KA, WRK, "per100k"),
    agentOverWrkRate: peers.ratio(AGENT_KA, WRK, "rps"),
    agentSaturatedSeconds: saturated(AGENT_KA),
    agentOverNodeFloorCpuPer100k: peers.ratio(AGENT_KA, FLOOR_KA, "per100k"),
    nodeFloorOverWrkCpuPer100k: peers.ratio(FLOOR_KA, WRK, "per100k"),
  };
if (MODE !== "keepalive")
  summary.connectionPerRequest = {
    goal: "agent rate >= 1.0 x ab -c 50",
    agentOverAbRate: peers.ratio(AGENT_CLOSE, AB, "rps"),
    agentOverAbCpuPer100k: peers.ratio(AGENT_CLOSE, AB, "per100k"),
    agentSaturatedSeconds: saturated(AGENT_CLOSE),
    agentOverNodeFloorRate: peers.ratio(AGENT_CLOSE, FLOOR_CLOSE, "rps"),
    nodeFloorOverAbRate: peers.ratio(FLOOR_CLOSE, AB, "rps"),
  };
console.log(JSON.stringify(summary, null, 2));
