/**
 * Plain HTTP load (issue 19): `volley-agent run` beside autocannon, wrk and ab at the same simple
 * node:http server (apps/targets' hello-http app: any request → 200 `hello`), the server pinned to
 * core 0 and every client to core 1, alternating run by run in one invocation.
 *
 * keep-alive: 50 connections, 3,000 requests/s, 30,000 requests. The agent (http-rps, GET,
 * constant arrival, `requests: 30000`) and autocannon (`-c 50 -R 3000 -a 30000`, through its JS
 * API) each report CPU over the run alone (start-up excluded), as CPU-seconds per 100,000 requests;
 * goal: agent ≤ 1.2 × autocannon. The two loads differ in shape: the agent sends a request every
 * 333 µs (each one timed from its intended instant), while autocannon's rate is a closed loop that
 * sends each connection's 60 requests of the second back to back and then idles, so the server and
 * the client sleep and are woken far less often. Hence also the same shape on both sides: a closed
 * loop of 50 users flat out, 100,000 requests (agent `loop: closed`, autocannon `-c 50 -a 100000`).
 * wrk (`-t1 -c50`, 10 s) and ab (`-k -c 50 -n 30000`) have no rate control and run flat out: their
 * CPU per 100k (whole process, /usr/bin/time) and rate are shown for scale.
 *
 * connection per request: ab `-c 50 -n 20000` (no -k) sets the reference rate; wrk with
 * `Connection: close` beside it; the agent with `keepAlive: false` in a closed loop of 50 users
 * (`loop: closed`, `requests: 20000`: its highest rate at 50 in flight, as ab's), and in an open
 * loop at 0.8 × ab's rate for 10 s (sustained: nothing shed or lost, send rate on plan). Goal: the
 * agent's highest sustained rate ≥ 0.8 × ab's.
 *
 *   node --import tsx bench/http-side-by-side.ts [runs=3] [all|keepalive|close]
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ensureAutocannon } from "./lib/autocannon";
import { HttpPeers, httpPlan, loadAverage } from "./lib/http-peers";
import { spawnPinned } from "./lib/spawn-pinned";

const RUNS = Math.max(1, Math.min(9, Number(process.argv[2] ?? 3)));
const MODE = process.argv[3] ?? "all";
if (!["all", "keepalive", "close"].includes(MODE)) throw new Error(`mode must be all, keepalive or close (got ${MODE})`);
const KA = { conns: 50, rate: 3000, requests: 30_000, flatOut: 100_000 };
const CLOSE = { conns: 50, requests: 20_000, openSeconds: 10 };
const dir = mkdtempSync(path.join(tmpdir(), "volley-http-bench-"));
const acDir = ensureAutocannon();
for (const tool of ["wrk", "ab"]) execFileSync("which", [tool]); // fails early, naming the missing tool
const peers = new HttpPeers(dir);

const server = spawnPinned(0, [process.execPath, "--import", "tsx", "bench/lib/hello-http-server.ts", "0"], { limitMs: 3_600_000 });
const base = /(http:\/\/[^\s]+)/.exec(await server.waitFor(/hello listening on http:\/\//))![1]!;
const url = `${base}/hello`;

async function autocannon(run: number, who = "autocannon", rate = KA.rate, amount = KA.requests): Promise<void> {
  const p = spawnPinned(
    1,
    [
      "/usr/bin/time",
      "-f",
      "TIME %U %S",
      process.execPath,
      "--import",
      "tsx",
      "bench/baseline/autocannon-run.ts",
      acDir,
      url,
      String(KA.conns),
      String(rate),
      String(amount),
    ],
    { limitMs: 300_000 },
  );
  await p.exited;
  const r = JSON.parse(p.stdout().trim().split("\n").pop()!) as { received: number; cpuSeconds: number; rps: number; non2xx: number; errors: number };
  peers.fromReport(who, run, { requests: r.received, rps: r.rps, cpuSeconds: r.cpuSeconds }, p.stderr(), { non2xx: r.non2xx, errors: r.errors });
}

const agent = (who: string, run: number, yaml: string) => peers.agent(who, run, yaml);
const wrk = (who: string, run: number, close: boolean) => peers.wrk(who, run, url, KA.conns, 10, close);
const ab = async (who: string, run: number, keepAlive: boolean, n: number) => (await peers.ab(who, run, url, KA.conns, n, keepAlive)).rps;
const plan = (name: string, http: string, scenario: string) => httpPlan(name, url, KA.conns, http, scenario);

const abClose: number[] = [];
try {
  for (let run = 1; run <= RUNS; run++) {
    if (MODE !== "close") {
      await agent(
        "agent keep-alive",
        run,
        plan(
          "http keep-alive",
          "",
          `message: { rate: ${KA.rate}, arrival: constant, timeout: 10s }, duration: ${(KA.requests / KA.rate) * 2}s, requests: ${KA.requests}`,
        ),
      );
      await autocannon(run);
      // The same load shape on both sides: 50 users each waiting for its reply, flat out.
      await agent(
        "agent keep-alive, closed loop 50 users (flat out)",
        run,
        plan("http keep-alive, closed", "", `message: { rate: 1000000, timeout: 10s }, duration: 120s, loop: closed, requests: ${KA.flatOut}`),
      );
      await autocannon(run, "autocannon (flat out)", 0, KA.flatOut);
      await wrk("wrk keep-alive (flat out)", run, false);
      await ab("ab -k (flat out)", run, true, KA.requests);
    }
    if (MODE !== "keepalive") {
      const abRate = await ab("ab -c 50 (new connection per request)", run, false, CLOSE.requests);
      abClose.push(abRate);
      await wrk("wrk Connection: close (flat out)", run, true);
      await agent(
        "agent keepAlive: false, closed loop 50 users",
        run,
        plan(
          "http per request, closed",
          ", keepAlive: false",
          `message: { rate: 1000000, timeout: 10s }, duration: 120s, loop: closed, requests: ${CLOSE.requests}`,
        ),
      );
      const open = Math.round(abRate * 0.8);
      await agent(
        `agent keepAlive: false, open loop at 0.8 × ab`,
        run,
        plan("http per request, open", ", keepAlive: false", `message: { rate: ${open}, arrival: constant, timeout: 10s }, duration: ${CLOSE.openSeconds}s`),
      );
    }
  }
} finally {
  server.kill();
  await server.exited;
}

const summary: Record<string, unknown> = { runs: RUNS, loadAverageAtEnd: loadAverage(), medians: peers.medians() };
const ratio = (a: string, b: string, k: "per100k" | "rps") => peers.ratio(a, b, k);
if (MODE !== "close")
  summary.keepAlive = {
    goal: "<= 1.2",
    // Same load shape: both closed loops of 50 users, flat out.
    agentOverAutocannonCpuPer100kClosedLoops: ratio("agent keep-alive, closed loop 50 users (flat out)", "autocannon (flat out)", "per100k"),
    // 3,000/s: the agent's constant arrival (a request every 333 µs) against autocannon's rate, which
    // is a closed loop sending each connection's share of the second back to back, then idle.
    agentOverAutocannonCpuPer100kAt3000: ratio("agent keep-alive", "autocannon", "per100k"),
  };
if (MODE !== "keepalive") {
  const sustained = peers.rows.filter((r) => r.who === "agent keepAlive: false, open loop at 0.8 × ab").map((r) => ({ run: r.run, ...(r.extra as object) }));
  summary.connectionPerRequest = {
    abRate: peers.median("ab -c 50 (new connection per request)", "rps"),
    agentClosedLoopOverAb: ratio("agent keepAlive: false, closed loop 50 users", "ab -c 50 (new connection per request)", "rps"),
    openLoopAt08: sustained,
    goal: "agent's highest sustained rate >= 0.8 x ab -c 50",
  };
}
console.log(JSON.stringify(summary, null, 2));
