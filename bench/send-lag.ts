/**
 * Send lag and latency against a known truth, side by side (issue 29): the agent, the minimal `ws`
 * client (bench/baseline/ws-latency-client.ts) and Artillery 2.0.34, in one invocation, each on a
 * fresh target process (apps/targets, core 0; clients on core 1), alternating within every round.
 *
 * - `held`: 50 connections × 20 msg/s for 20 s; the target holds each echo 25 ms (ECHO_HOLD=precise)
 *   and reports every hold it actually applied (GET /stats). Read: reported latency minus the
 *   target's real hold at the same percentile (what remains is loopback plus the tool's own error),
 *   send lag p50/p99, CPU per 100k round trips over the run window (all threads). The agent's plan
 *   opens its 50 connections over one 50 ms interval (connections.rate 1,000/s), so its 50 schedules
 *   are spread over the interval as the baseline's phases are: the same load, not a burst of 50.
 *   Artillery (closed loop: send, wait for the echo, think 25 ms = interval minus hold) times send to
 *   reply in a processor; it has no intended send time, so it has no send lag to report.
 * - `fast`: 100 connections × 100 msg/s for 10 s, undelayed echo: send lag p50/p99 and CPU per 100k,
 *   agent and baseline.
 * - `start`: the first second at 10,000 msg/s on one core (100 connections × 100 msg/s for 5 s,
 *   undelayed), agent only: the first interval's CPU, send lag p99/max and saturation beside the
 *   full seconds after it (goal: the first interval not saturated by the engine's own start).
 *
 * Every agent row also reads its frames (`--frames`): send lag p99 of the first interval and of
 * the full intervals after it, and which intervals were flagged saturated, so a cold start shows
 * apart from the steady state (nothing is left out of the summary figures above).
 *
 * Goals: agent send lag p50 ≤ 0.1 ms and p99 ≤ 1 ms at both shapes (when not saturated); at `held`,
 * latency minus hold p50 ≤ 0.25 ms and p99 ≤ 1 ms, closer than the baseline and Artillery; CPU per
 * 100k round trips ≤ 1.0× the baseline's. Median of RUNS rounds.
 *
 * A fifth argument names another build of the agent's bundle (a copy of apps/agent/dist's
 * volley-agent.mjs and its chunks, say from before a change): it runs in every round beside the
 * working tree's, as "volley-agent run (other build)", for a before/after in one invocation.
 *
 *   node --import tsx bench/send-lag.ts [runs=3] [all|held|fast] [artillery|no-artillery] [other bundle]
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { decodeHistogram, mergeEncoded } from "@volley/metrics";
import { checkArtillery, counter, RTT_PROCESSOR, rttLoopScript, runArtillery } from "./lib/artillery-run";
import { AGENT_BIN, agentCpuSeconds, median, spawnPinned, startTarget } from "./lib/spawn-pinned";

const RUNS = Math.max(1, Math.min(9, Number(process.argv[2] ?? 3)));
const WHAT = process.argv[3] ?? "all";
if (!["all", "held", "fast", "start"].includes(WHAT)) throw new Error(`second argument must be all, held, fast or start (got ${WHAT})`);
const ARTILLERY = (process.argv[4] ?? "artillery") === "artillery";
const OTHER_BUNDLE = process.argv[5] ? path.resolve(process.argv[5]) : undefined;
if (OTHER_BUNDLE && !existsSync(OTHER_BUNDLE))
  throw new Error(
    `fifth argument: no agent bundle at ${OTHER_BUNDLE}; copy apps/agent/dist (built by npm run setup) inside the repository and name its volley-agent.mjs`,
  );
const OTHER = "volley-agent run (other build)";

const SHAPES = {
  held: { conns: 50, rate: 20, seconds: 20, holdMs: 25 },
  fast: { conns: 100, rate: 100, seconds: 10, holdMs: 0 },
  start: { conns: 100, rate: 100, seconds: 5, holdMs: 0 },
} as const;
type ShapeName = keyof typeof SHAPES;
const GOAL = { sendLagP50: 0.1, sendLagP99: 1, excessP50: 0.25, excessP99: 1, cpuRatio: 1 };

interface Hold {
  count: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}
interface Row {
  who: string;
  shape: ShapeName;
  run: number;
  sent: number;
  received: number;
  latency: { p50: number; p99: number };
  sendLag?: { p50: number; p99: number };
  cpuPer100k?: number;
  /** Context switches (voluntary + involuntary, every thread, the whole process) per round trip: the wake-ups a send and its reply cost. */
  switchesPerRoundTrip?: number;
  saturated?: number;
  hold?: Hold;
  /** The agent's own intervals: the first one's and the later full ones'. */
  intervals?: Intervals;
}

interface Intervals {
  first: { cpu: number; sendLagP99: number; sendLagMax: number; saturated: boolean; sent: number };
  /** Send lag p99 over the full intervals after the first, merged exactly. */
  laterP99: number;
  /**
   * The engine thread's CPU per 1,000 sends in the first interval over that of the full intervals
   * after it (each interval's CPU share × its length): what running cold costs, read from CPU time,
   * which a machine busy with other work does not inflate as it does lag.
   */
  firstCpuPerSendRatio: number;
  /** Each interval's send lag p99 (ms), in order, `S` where it was flagged saturated. */
  perSecond: string;
}

interface FrameLine {
  counters: Record<string, number>;
  histograms: Record<string, string>;
  durationMs: number;
  health: { cpu: number; saturated: boolean };
}

function intervalsOf(file: string): Intervals {
  const frames = readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as FrameLine);
  const lag = (f: FrameLine) => f.histograms["message.send_lag"];
  const ms = (us: number) => Math.round(us) / 1000;
  const first = frames[0]!;
  const h = lag(first) ? decodeHistogram(lag(first)!) : undefined;
  const later = frames.slice(1).filter((f) => f.durationMs === 1000 && lag(f));
  const cpuPerSend = (fs: FrameLine[]) =>
    fs.reduce((n, f) => n + f.health.cpu * f.durationMs, 0) /
    Math.max(
      1,
      fs.reduce((n, f) => n + (f.counters["messages.sent"] ?? 0), 0),
    );
  return {
    first: {
      cpu: first.health.cpu,
      sendLagP99: h ? ms(h.getValueAtPercentile(99)) : 0,
      sendLagMax: h ? ms(h.maxValue) : 0,
      saturated: first.health.saturated,
      sent: first.counters["messages.sent"] ?? 0,
    },
    laterP99: later.length ? ms(mergeEncoded(later.map((f) => lag(f)!)).getValueAtPercentile(99)) : Number.NaN,
    firstCpuPerSendRatio: Math.round((cpuPerSend([first]) / cpuPerSend(later)) * 100) / 100,
    perSecond: frames.map((f) => (lag(f) ? `${ms(decodeHistogram(lag(f)!).getValueAtPercentile(99))}${f.health.saturated ? "S" : ""}` : "-")).join(" "),
  };
}

/** GNU time's counts of the process's context switches (all threads, start to exit), on its last stderr line. */
const SWITCHES = ["/usr/bin/time", "-f", "switches %w %c"];
function switchesOf(stderr: string): number {
  const m = /switches (\d+) (\d+)\s*$/.exec(stderr);
  return m ? Number(m[1]) + Number(m[2]) : Number.NaN;
}

const dir = mkdtempSync(path.join(tmpdir(), "volley-send-lag-"));
const statsUrlOf = (url: string) => url.replace(/^ws:/, "http:").replace(/\/echo$/, "/stats");
const targetUrl = (url: string, holdMs: number) => (holdMs > 0 ? `${url}?delay=${holdMs}` : url);

async function holdsOf(url: string): Promise<Hold | undefined> {
  const res = await fetch(statsUrlOf(url));
  return res.ok ? ((await res.json()) as { hold: Hold }).hold : undefined;
}

/** Runs `f` against a fresh target (a target that served runs before holds with a wider tail) and reads its holds after. */
async function onFreshTarget(shape: ShapeName, f: (url: string) => Promise<Omit<Row, "hold">>): Promise<Row> {
  const target = await startTarget({ ECHO_HOLD: "precise" });
  try {
    const row = await f(targetUrl(target.url, SHAPES[shape].holdMs));
    return SHAPES[shape].holdMs > 0 ? { ...row, hold: await holdsOf(target.url) } : row;
  } finally {
    await target.stop();
  }
}

async function agent(shape: ShapeName, run: number, bundle?: string): Promise<Row> {
  const s = SHAPES[shape];
  return onFreshTarget(shape, async (url) => {
    const plan = path.join(dir, `${shape}-${run}.yaml`);
    writeFileSync(
      plan,
      `name: send lag ${shape}
target: { url: "${url}" }
connections: { count: ${s.conns}, rate: ${s.conns * s.rate} }
scenario: { kind: echo, message: { rate: ${s.rate}, bytes: 64 }, duration: ${s.seconds}s }
`,
    );
    const frames = path.join(dir, `${shape}-${run}.frames`);
    // Another build runs as the bin runs its own: the V8 settings first, then the bundle.
    const bin = bundle ? ["--import", "./apps/agent/bin/v8-flags.mjs", bundle] : [AGENT_BIN];
    const a = spawnPinned(1, [...SWITCHES, process.execPath, ...bin, "run", plan, "--json", "--frames", frames]);
    const code = await a.exited;
    if (code !== 0) throw new Error(`agent exited ${code}: ${a.stderr().slice(-500)}`);
    const out = JSON.parse(a.stdout()) as {
      messages: { sent: number; received: number };
      latency: { p50: number; p99: number };
      sendLag: { p50: number; p99: number };
      intervals: { saturated: number };
    };
    return {
      who: bundle ? OTHER : "volley-agent run",
      shape,
      run,
      sent: out.messages.sent,
      received: out.messages.received,
      latency: out.latency,
      sendLag: out.sendLag,
      cpuPer100k: (agentCpuSeconds(a.stderr()) * 100_000) / Math.max(1, out.messages.received),
      switchesPerRoundTrip: switchesOf(a.stderr()) / Math.max(1, out.messages.received),
      saturated: out.intervals.saturated,
      intervals: intervalsOf(frames),
    };
  });
}

async function baseline(shape: ShapeName, run: number): Promise<Row> {
  const s = SHAPES[shape];
  return onFreshTarget(shape, async (url) => {
    const b = spawnPinned(1, [
      ...SWITCHES,
      process.execPath,
      "--import",
      "tsx",
      "bench/baseline/ws-latency-client.ts",
      url,
      String(s.conns),
      String(s.rate),
      String(s.seconds),
    ]);
    const code = await b.exited;
    if (code !== 0) throw new Error(`baseline exited ${code}: ${b.stderr().slice(-500)}`);
    const out = JSON.parse(b.stdout()) as {
      sent: number;
      received: number;
      latency: { p50: number; p99: number };
      sendLag: { p50: number; p99: number };
      cpuSeconds: number;
    };
    return {
      who: "baseline ws client",
      shape,
      run,
      sent: out.sent,
      received: out.received,
      latency: out.latency,
      sendLag: out.sendLag,
      cpuPer100k: (out.cpuSeconds * 100_000) / Math.max(1, out.received),
      switchesPerRoundTrip: switchesOf(b.stderr()) / Math.max(1, out.received),
    };
  });
}

async function artillery(run: number): Promise<Row> {
  const s = SHAPES.held;
  return onFreshTarget("held", async (url) => {
    const script = rttLoopScript(url, { conns: s.conns, seconds: s.seconds, thinkMs: 1000 / s.rate - s.holdMs });
    const art = await runArtillery(script, { processor: { file: "rtt.mjs", source: RTT_PROCESSOR }, limitMs: 90_000 });
    checkArtillery(art, "held");
    const rtt = art.aggregate.summaries?.ws_rtt_ms;
    if (!rtt) throw new Error(`artillery reported no ws_rtt_ms summary: ${art.stderr.slice(-500)}`);
    const received = counter(art, "websocket.messages_received");
    return {
      who: "artillery",
      shape: "held",
      run,
      sent: counter(art, "websocket.messages_sent"),
      received,
      latency: { p50: rtt.p50, p99: rtt.p99 },
      cpuPer100k: (art.windowCpu * 100_000) / Math.max(1, received),
    };
  });
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;
const rows: Row[] = [];
const shapes: ShapeName[] = WHAT === "all" ? ["held", "fast"] : [WHAT as ShapeName];
for (let run = 1; run <= RUNS; run++) {
  for (const shape of shapes) {
    const round = shape === "start" ? [await agent(shape, run)] : [await agent(shape, run), await baseline(shape, run)];
    if (OTHER_BUNDLE) round.push(await agent(shape, run, OTHER_BUNDLE));
    if (shape === "held" && ARTILLERY) round.push(await artillery(run));
    for (const r of round) {
      const excess = r.hold
        ? ` | minus the target's hold (p50 ${r.hold.p50Ms} / p99 ${r.hold.p99Ms}): ${r3(r.latency.p50 - r.hold.p50Ms)} / ${r3(r.latency.p99 - r.hold.p99Ms)} ms`
        : "";
      const lag = r.sendLag ? ` | send lag p50 ${r.sendLag.p50} / p99 ${r.sendLag.p99} ms` : "";
      const i = r.intervals;
      const first = i
        ? ` | first interval: CPU ${i.first.cpu} %, send lag p99 ${i.first.sendLagP99} / max ${i.first.sendLagMax} ms, saturated ${i.first.saturated}; later full intervals p99 ${i.laterP99} ms; first CPU per send ${i.firstCpuPerSendRatio}× the later; per second p99 ${i.perSecond}`
        : "";
      console.error(
        `${shape} run ${run}, ${r.who}: latency p50 ${r.latency.p50} / p99 ${r.latency.p99} ms${excess}${lag} | ${r.cpuPer100k?.toFixed(2) ?? "?"} CPU-s per 100k, ${r.switchesPerRoundTrip?.toFixed(2) ?? "?"} context switches per round trip | sent ${r.sent}, received ${r.received}${r.saturated === undefined ? "" : `, saturated ${r.saturated}`}${first}`,
      );
      rows.push(r);
    }
  }
}

function summarise(shape: ShapeName, who: string) {
  const mine = rows.filter((r) => r.shape === shape && r.who === who);
  if (mine.length === 0) return undefined;
  const m = (f: (r: Row) => number | undefined) => r3(median(mine.map((r) => f(r) ?? Number.NaN)));
  return {
    latencyP50: m((r) => r.latency.p50),
    latencyP99: m((r) => r.latency.p99),
    ...(SHAPES[shape].holdMs > 0
      ? {
          holdP50: m((r) => r.hold?.p50Ms),
          holdP99: m((r) => r.hold?.p99Ms),
          excessP50: m((r) => r.latency.p50 - (r.hold?.p50Ms ?? Number.NaN)),
          excessP99: m((r) => r.latency.p99 - (r.hold?.p99Ms ?? Number.NaN)),
        }
      : {}),
    ...(mine[0]!.sendLag ? { sendLagP50: m((r) => r.sendLag?.p50), sendLagP99: m((r) => r.sendLag?.p99) } : {}),
    cpuPer100k: m((r) => r.cpuPer100k),
    switchesPerRoundTrip: m((r) => r.switchesPerRoundTrip),
    sent: m((r) => r.sent),
    planned: SHAPES[shape].conns * SHAPES[shape].rate * SHAPES[shape].seconds,
    ...(mine[0]!.saturated === undefined ? {} : { saturatedIntervals: m((r) => r.saturated) }),
    ...(mine[0]!.intervals
      ? {
          firstInterval: {
            cpu: m((r) => r.intervals?.first.cpu),
            sendLagP99: m((r) => r.intervals?.first.sendLagP99),
            sendLagMax: m((r) => r.intervals?.first.sendLagMax),
            saturated: `${mine.filter((r) => r.intervals?.first.saturated).length} of ${mine.length}`,
          },
          laterFullIntervalsSendLagP99: m((r) => r.intervals?.laterP99),
          firstCpuPerSendRatio: m((r) => r.intervals?.firstCpuPerSendRatio),
        }
      : {}),
  };
}

const result = Object.fromEntries(
  shapes.map((shape) => {
    const a = summarise(shape, "volley-agent run")!;
    const other = summarise(shape, OTHER);
    const compared = other ? { otherBuild: { bundle: OTHER_BUNDLE, ...other, cpuRatioToThisBuild: r3(other.cpuPer100k / a.cpuPer100k) } } : {};
    if (shape === "start") {
      const clean = rows.filter((r) => r.shape === "start" && !r.intervals?.first.saturated).length;
      return [shape, { load: SHAPES[shape], agent: a, ...compared, goals: { firstIntervalNotSaturated: clean === RUNS } }];
    }
    const b = summarise(shape, "baseline ws client")!;
    const art = summarise(shape, "artillery");
    const goals = {
      sendLagP50: a.sendLagP50! <= GOAL.sendLagP50,
      sendLagP99: a.sendLagP99! <= GOAL.sendLagP99,
      cpuRatio: r3(a.cpuPer100k / b.cpuPer100k),
      ...(a.excessP50 === undefined
        ? {}
        : {
            excessP50: Math.abs(a.excessP50) <= GOAL.excessP50,
            excessP99: Math.abs(a.excessP99!) <= GOAL.excessP99,
            closerThanBaseline: Math.abs(a.excessP50) <= Math.abs(b.excessP50!) && Math.abs(a.excessP99!) <= Math.abs(b.excessP99!),
            ...(art ? { closerThanArtillery: Math.abs(a.excessP50) <= Math.abs(art.excessP50!) && Math.abs(a.excessP99!) <= Math.abs(art.excessP99!) } : {}),
          }),
    };
    return [shape, { load: SHAPES[shape], agent: a, ...compared, baseline: b, ...(art ? { artillery: art } : {}), goals }];
  }),
);
console.log(JSON.stringify({ runs: RUNS, goal: GOAL, ...result }, null, 2));
