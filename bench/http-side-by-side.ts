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
import { mkdtempSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { ensureAutocannon } from "./lib/autocannon";
import { AGENT_BIN, agentCpuSeconds, median, spawnPinned } from "./lib/spawn-pinned";

const RUNS = Math.max(1, Math.min(9, Number(process.argv[2] ?? 3)));
const MODE = process.argv[3] ?? "all";
if (!["all", "keepalive", "close"].includes(MODE)) throw new Error(`mode must be all, keepalive or close (got ${MODE})`);
const KA = { conns: 50, rate: 3000, requests: 30_000, flatOut: 100_000 };
const CLOSE = { conns: 50, requests: 20_000, openSeconds: 10 };
const dir = mkdtempSync(path.join(tmpdir(), "volley-http-bench-"));
const acDir = ensureAutocannon();
for (const tool of ["wrk", "ab"]) execFileSync("which", [tool]); // fails early, naming the missing tool

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
const timeLine = (stderr: string) => {
  const m = /TIME ([\d.]+) ([\d.]+)/.exec(stderr);
  return m ? Number(m[1]) + Number(m[2]) : NaN;
};

const server = spawnPinned(0, [process.execPath, "--import", "tsx", "bench/lib/hello-http-server.ts", "0"], { limitMs: 3_600_000 });
const base = /(http:\/\/[^\s]+)/.exec(await server.waitFor(/hello listening on http:\/\//))![1]!;
const url = `${base}/hello`;

interface Row {
  who: string;
  run: number;
  requests: number;
  cpu: number;
  per100k: number;
  rps: number;
  whole: number;
  extra?: Record<string, unknown>;
}
const rows: Row[] = [];
const log = (r: Row) => {
  rows.push(r);
  console.error(
    `${r.who} run ${r.run}: ${r.requests} requests, ${r.rps.toFixed(0)}/s, cpu ${r.cpu.toFixed(3)} s (${r.per100k.toFixed(3)} s per 100k; whole process ${r.whole.toFixed(2)} s)${r.extra ? ` ${JSON.stringify(r.extra)}` : ""} [load ${load()}]`,
  );
};

async function agent(who: string, run: number, yaml: string): Promise<void> {
  const file = path.join(dir, `${who.replace(/\W+/g, "-")}-${run}.yaml`);
  writeFileSync(file, yaml);
  const a = spawnPinned(1, ["/usr/bin/time", "-f", "TIME %U %S", process.execPath, AGENT_BIN, "run", file, "--json"], { limitMs: 300_000 });
  const code = await a.exited;
  const s = JSON.parse(a.stdout()) as {
    messages: { sent: number; received: number; lost: number; shed: number; sendRate: number; receiveRate: number };
    latency: { p50: number; p99: number };
    closedLoop?: { responseTime: { p50: number; p99: number } };
    errors: Record<string, number>;
  };
  if (code !== 0) console.error(`${who} exited ${code}: ${a.stderr().slice(-300)}`);
  const cpu = agentCpuSeconds(a.stderr());
  const m = s.messages;
  const t = s.closedLoop?.responseTime ?? s.latency;
  log({
    who,
    run,
    requests: m.received,
    cpu,
    per100k: (cpu * 100_000) / m.received,
    rps: m.receiveRate,
    whole: timeLine(a.stderr()),
    extra: { sent: m.sent, lost: m.lost, shed: m.shed, sendRate: m.sendRate, p50: t.p50, p99: t.p99, errors: s.errors },
  });
}

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
  log({
    who,
    run,
    requests: r.received,
    cpu: r.cpuSeconds,
    per100k: (r.cpuSeconds * 100_000) / r.received,
    rps: r.rps,
    whole: timeLine(p.stderr()),
    extra: { non2xx: r.non2xx, errors: r.errors },
  });
}

/** wrk prints "N requests in Xs" and "Requests/sec: R"; its CPU is the whole process's. */
async function wrk(who: string, run: number, close: boolean): Promise<void> {
  const p = spawnPinned(1, ["/usr/bin/time", "-f", "TIME %U %S", "wrk", "-t1", `-c${KA.conns}`, "-d10s", ...(close ? ["-H", "Connection: close"] : []), url], {
    limitMs: 60_000,
  });
  await p.exited;
  const out = p.stdout();
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? NaN);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  const errors = /Socket errors:[^\n]*|Non-2xx[^\n]*/.exec(out)?.[0];
  const cpu = timeLine(p.stderr());
  log({ who, run, requests, cpu, per100k: (cpu * 100_000) / requests, rps, whole: cpu, ...(errors ? { extra: { errors } } : {}) });
}

async function ab(who: string, run: number, keepAlive: boolean, n: number): Promise<number> {
  const p = spawnPinned(1, ["/usr/bin/time", "-f", "TIME %U %S", "ab", "-q", ...(keepAlive ? ["-k"] : []), "-c", String(KA.conns), "-n", String(n), url], {
    limitMs: 120_000,
  });
  await p.exited;
  const out = p.stdout();
  const complete = Number(/Complete requests:\s+(\d+)/.exec(out)?.[1] ?? NaN);
  const failed = Number(/Failed requests:\s+(\d+)/.exec(out)?.[1] ?? NaN);
  const rps = Number(/Requests per second:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  const cpu = timeLine(p.stderr());
  log({ who, run, requests: complete - failed, cpu, per100k: (cpu * 100_000) / (complete - failed), rps, whole: cpu, extra: { failed } });
  return rps;
}

const plan = (name: string, http: string, scenario: string) => `name: ${name}
target: { url: "${url}", protocol: http, http: { method: GET${http} } }
connections: { count: ${KA.conns}, rate: 10000 }
scenario: { kind: http-rps, ${scenario} }
`;

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

const by = (who: string) => rows.filter((r) => r.who === who);
const med = (who: string, k: "per100k" | "rps" | "cpu") => (by(who).length ? Number(median(by(who).map((r) => r[k])).toFixed(3)) : null);
/** Per round, a's figure over b's (neighbours in time), then the median. */
const ratio = (a: string, b: string, k: "per100k" | "rps") => {
  const rs = by(a)
    .map((r) => r[k] / (by(b).find((x) => x.run === r.run)?.[k] ?? NaN))
    .filter(Number.isFinite);
  return rs.length ? Number(median(rs).toFixed(3)) : null;
};
const whos = [...new Set(rows.map((r) => r.who))];
const summary: Record<string, unknown> = {
  runs: RUNS,
  loadAverageAtEnd: load(),
  medians: Object.fromEntries(whos.map((w) => [w, { per100k: med(w, "per100k"), rps: med(w, "rps") }])),
};
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
  const sustained = by("agent keepAlive: false, open loop at 0.8 × ab").map((r) => ({ run: r.run, ...(r.extra as object) }));
  summary.connectionPerRequest = {
    abRate: med("ab -c 50 (new connection per request)", "rps"),
    agentClosedLoopOverAb: ratio("agent keepAlive: false, closed loop 50 users", "ab -c 50 (new connection per request)", "rps"),
    openLoopAt08: sustained,
    goal: "agent's highest sustained rate >= 0.8 x ab -c 50",
  };
}
console.log(JSON.stringify(summary, null, 2));
