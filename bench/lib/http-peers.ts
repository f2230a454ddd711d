import { readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import path from "node:path";
import { AGENT_BIN, agentCpuSeconds, median, spawnPinned } from "./spawn-pinned";

/**
 * The HTTP side-by-side benches' runs (http-side-by-side.ts, http-nginx.ts): `volley-agent run`,
 * wrk, ab and the Node runtime's floor (baseline/node-net-http-client.ts), each pinned to core 1 against a server on core 0, one row per run with its request
 * count, rate and CPU per 100k requests (the agent's over the run alone, as its CLI reports it;
 * wrk's and ab's whole process, /usr/bin/time).
 */
export interface Row {
  who: string;
  run: number;
  requests: number;
  cpu: number;
  per100k: number;
  rps: number;
  whole: number;
  extra?: Record<string, unknown>;
}

export const loadAverage = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");

/** User + system seconds from /usr/bin/time -f "TIME %U %S" on stderr. */
export const timeLine = (stderr: string) => {
  const m = /TIME ([\d.]+) ([\d.]+)/.exec(stderr);
  return m ? Number(m[1]) + Number(m[2]) : NaN;
};
const TIME = ["/usr/bin/time", "-f", "TIME %U %S"];

export class HttpPeers {
  readonly rows: Row[] = [];

  /** `dir` holds the agent's plan files; `agentBin` is what runs the agent (the repo's bin unless a bench built its own). */
  constructor(
    private readonly dir: string,
    private readonly agentBin = AGENT_BIN,
  ) {}

  log(r: Row): void {
    this.rows.push(r);
    console.error(
      `${r.who} run ${r.run}: ${r.requests} requests, ${r.rps.toFixed(0)}/s, cpu ${r.cpu.toFixed(3)} s (${r.per100k.toFixed(3)} s per 100k; whole process ${r.whole.toFixed(2)} s)${r.extra ? ` ${JSON.stringify(r.extra)}` : ""} [load ${loadAverage()}]`,
    );
  }

  /** One `volley-agent run --json` of `yaml`; the row's extra says what it sent, lost and shed, and how many seconds it flagged itself saturated. */
  async agent(who: string, run: number, yaml: string): Promise<Row> {
    const file = path.join(this.dir, `${who.replace(/\W+/g, "-")}-${run}.yaml`);
    writeFileSync(file, yaml);
    const framesFile = file.replace(/\.yaml$/, ".frames.jsonl");
    const a = spawnPinned(1, [...TIME, process.execPath, this.agentBin, "run", file, "--json", "--frames", framesFile], { limitMs: 300_000 });
    const code = await a.exited;
    const s = JSON.parse(a.stdout()) as {
      messages: { sent: number; received: number; lost: number; shed: number; sendRate: number; receiveRate: number };
      latency: { p50: number; p99: number };
      closedLoop?: { responseTime: { p50: number; p99: number } };
      intervals: { measured: number; saturated: number };
      errors: Record<string, number>;
    };
    if (code !== 0) console.error(`${who} exited ${code}: ${a.stderr().slice(-300)}`);
    const cpu = agentCpuSeconds(a.stderr());
    const m = s.messages;
    const t = s.closedLoop?.responseTime ?? s.latency;
    const row: Row = {
      who,
      run,
      requests: m.received,
      cpu,
      per100k: (cpu * 100_000) / m.received,
      rps: m.receiveRate,
      whole: timeLine(a.stderr()),
      extra: {
        sent: m.sent,
        lost: m.lost,
        shed: m.shed,
        sendRate: m.sendRate,
        p50: t.p50,
        p99: t.p99,
        saturatedSeconds: `${s.intervals.saturated} of ${s.intervals.measured}`,
        ...secondsHealth(framesFile),
        errors: s.errors,
      },
    };
    this.log(row);
    return row;
  }

  /** wrk -t1 for `seconds` (it prints "N requests in Xs" and "Requests/sec: R"). */
  async wrk(who: string, run: number, url: string, conns: number, seconds: number, close: boolean): Promise<Row> {
    const p = spawnPinned(1, [...TIME, "wrk", "-t1", `-c${conns}`, `-d${seconds}s`, ...(close ? ["-H", "Connection: close"] : []), url], {
      limitMs: (seconds + 50) * 1000,
    });
    await p.exited;
    const out = p.stdout();
    const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? NaN);
    const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
    const errors = /Socket errors:[^\n]*|Non-2xx[^\n]*/.exec(out)?.[0];
    const cpu = timeLine(p.stderr());
    const row: Row = { who, run, requests, cpu, per100k: (cpu * 100_000) / requests, rps, whole: cpu, ...(errors ? { extra: { errors } } : {}) };
    this.log(row);
    return row;
  }

  /** ab -c `conns` -n `n` (with -k: keep-alive). */
  async ab(who: string, run: number, url: string, conns: number, n: number, keepAlive: boolean): Promise<Row> {
    const p = spawnPinned(1, [...TIME, "ab", "-q", ...(keepAlive ? ["-k"] : []), "-c", String(conns), "-n", String(n), url], { limitMs: 120_000 });
    await p.exited;
    const out = p.stdout();
    const complete = Number(/Complete requests:\s+(\d+)/.exec(out)?.[1] ?? NaN);
    const failed = Number(/Failed requests:\s+(\d+)/.exec(out)?.[1] ?? NaN);
    const rps = Number(/Requests per second:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
    const cpu = timeLine(p.stderr());
    const row: Row = { who, run, requests: complete - failed, cpu, per100k: (cpu * 100_000) / (complete - failed), rps, whole: cpu, extra: { failed } };
    this.log(row);
    return row;
  }

  /**
   * The Node floor (baseline/node-net-http-client.ts): a closed loop of `conns` users on `node:net`
   * alone, `requests` whole responses, kept-alive or a new connection each; its CPU over the run
   * window, as the agent's is.
   */
  async nodeFloor(who: string, run: number, url: string, conns: number, requests: number, keepAlive: boolean): Promise<Row> {
    const args = [
      process.execPath,
      "--import",
      "tsx",
      "bench/baseline/node-net-http-client.ts",
      url,
      String(conns),
      String(requests),
      keepAlive ? "keep-alive" : "close",
    ];
    const p = spawnPinned(1, [...TIME, ...args], { limitMs: 120_000 });
    const code = await p.exited;
    if (code !== 0) throw new Error(`${who} exited ${code}: ${p.stderr().slice(-300)}`);
    const out = JSON.parse(p.stdout().trim().split("\n").pop()!) as { requests: number; failed: number; rps: number; cpuSeconds: number };
    return this.fromReport(who, run, out, p.stderr(), { failed: out.failed });
  }

  /** A row from a Node client's own report (its CPU over its run window), logged. */
  fromReport(who: string, run: number, r: { requests: number; rps: number; cpuSeconds: number }, stderr: string, extra: Record<string, unknown>): Row {
    const row: Row = {
      who,
      run,
      requests: r.requests,
      cpu: r.cpuSeconds,
      per100k: (r.cpuSeconds * 100_000) / r.requests,
      rps: r.rps,
      whole: timeLine(stderr),
      extra,
    };
    this.log(row);
    return row;
  }

  private by(who: string): Row[] {
    return this.rows.filter((r) => r.who === who);
  }

  /** The median of `who`'s runs (null when it has none). */
  median(who: string, k: "per100k" | "rps" | "cpu"): number | null {
    const rs = this.by(who);
    return rs.length ? Number(median(rs.map((r) => r[k])).toFixed(3)) : null;
  }

  /** Per round, a's figure over b's (neighbours in time), then the median. */
  ratio(a: string, b: string, k: "per100k" | "rps"): number | null {
    const rs = this.by(a)
      .map((r) => r[k] / (this.by(b).find((x) => x.run === r.run)?.[k] ?? NaN))
      .filter(Number.isFinite);
    return rs.length ? Number(median(rs).toFixed(3)) : null;
  }

  /** Every client's medians, by name. */
  medians(): Record<string, { per100k: number | null; rps: number | null }> {
    const whos = [...new Set(this.rows.map((r) => r.who))];
    return Object.fromEntries(whos.map((w) => [w, { per100k: this.median(w, "per100k"), rps: this.median(w, "rps") }]));
  }
}

/**
 * The agent's own readings over its full seconds (the final partial one left out), medians: its
 * engine thread's CPU, event-loop busy share and wait for a CPU, percent. A closed loop whose loop
 * is mostly idle and whose thread hardly waits for a core was waiting for the server; one busy, or
 * on a CPU or waiting for one, throughout was the limit itself (and flags those seconds).
 */
function secondsHealth(framesFile: string): { cpuP50?: number; loopBusyP50?: number; cpuWaitP50?: number } {
  const full = readFileSync(framesFile, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { durationMs: number; health: { cpu: number; loopBusy?: number; cpuWait?: number } })
    .filter((f) => f.durationMs === 1000);
  if (full.length === 0) return {};
  const r1 = (n: number) => Math.round(n * 10) / 10;
  const p50 = (k: "loopBusy" | "cpuWait") => {
    const xs = full.map((f) => f.health[k]).filter((b): b is number => b !== undefined);
    return xs.length ? { [`${k}P50`]: r1(median(xs)) } : {};
  };
  return { cpuP50: r1(median(full.map((f) => f.health.cpu))), ...p50("loopBusy"), ...p50("cpuWait") };
}

/** A plan for `volley-agent run`: http-rps GET at `url`, `conns` connections, `http` and `scenario` spliced in. */
export const httpPlan = (name: string, url: string, conns: number, http: string, scenario: string) => `name: ${name}
target: { url: "${url}", protocol: http, http: { method: GET${http} } }
connections: { count: ${conns}, rate: 10000 }
scenario: { kind: http-rps, ${scenario} }
`;
