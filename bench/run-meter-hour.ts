/**
 * One merged measurement per run (issue 17) at full size: a synthetic run of 100 agents × 1 hour
 * (360,000 frames with real HdrHistograms), stored into PostgreSQL as the aggregator stores frames,
 * and followed by the hub's own RunMeter (apps/hub runs/run-meter.ts) in this process — the part of
 * the hub this issue changed: it reads each stored frame once, folds it, writes run_points and
 * run_meters. Frames are inserted by a child process (so its cost is not counted as the meter's).
 *
 * Phases and what is measured:
 * 1. live: `liveSeconds` seconds in real time at one frame per agent per second. The meter's CPU
 *    (this process, process.cpuUsage) as a share of one core; then the same again while
 *    GET /api/v1/runs/{id} is polled (its latency: p50/p95/max).
 * 2. fill: the rest of the hour inserted as fast as PostgreSQL takes it, the meter following; its
 *    heap and RSS sampled at every 10 % of the frames (flat = not proportional to frames), its CPU
 *    per frame; GET /api/v1/runs/{id} polled meanwhile ("while it runs", with the full backlog).
 * 3. finalize: the meter's last read, reconcile, final summary written; how long it took.
 * 4. after: GET /api/v1/runs/{id}, /intervals and /analysis latencies; the run page in Chromium
 *    (production build): navigation until the charts hold every point and have painted.
 *
 * Usage: node --import tsx bench/run-meter-hour.ts [agents=100] [seconds=3600] [liveSeconds=60]
 * Needs the web build (`npm run build -w @volley/web`, hold /tmp/volley-web.lock), PostgreSQL
 * (VOLLEY_BENCH_DATABASE_URL, default the local server), `redis-server` on PATH, /usr/bin/chromium.
 * Child mode (internal): node --import tsx bench/run-meter-hour.ts insert <dbUrl> <runId> <agents> <from> <to> <perSecond|0>
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { IntervalFrame } from "@volley/contracts";
import { createDb, finishRun, insertFrames, listShards } from "@volley/db";
import { CHROMIUM_FLAGS, CHROMIUM_PATH } from "@volley/devstack";
import { chromium } from "playwright-core";
import { pino } from "pino";
import { RunMeter } from "../apps/hub/src/runs/run-meter";
import { benchFrame, frameBodies, insertBenchRun, paintRunPage, readToken, signedInPage, signUpCookie, sleep, startWebStack } from "./lib/run-page";

const SELF = fileURLToPath(import.meta.url);

/** Child: inserts seconds [from, to) of every shard, `perSecond` > 0 paced in real time (one batch per second), else as fast as it goes. */
async function insertChild(url: string, runId: string, from: number, to: number, paced: boolean) {
  const h = createDb(url, 2);
  const shards = await listShards(h.db, runId);
  // 256 distinct bodies: encoding 360,000 would take longer than the run.
  const pool = frameBodies(256, 64);
  const t0 = Date.now() - from * 1000;
  let batch: IntervalFrame[] = [];
  for (let i = from; i < to; i++) {
    const tick = Date.now();
    for (const sh of shards) batch.push(benchFrame(runId, sh, i, t0, pool));
    if (paced || batch.length >= 1000) {
      await insertFrames(h.db, batch);
      batch = [];
      process.stdout.write(`${i}\n`);
    }
    if (paced) await sleep(Math.max(0, 1000 - (Date.now() - tick)));
  }
  if (batch.length) await insertFrames(h.db, batch);
  await h.close();
}

function runChild(args: string[], onLine?: (l: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, ["--import", "tsx", SELF, "insert", ...args], { stdio: ["ignore", "pipe", "inherit"] });
    c.stdout.setEncoding("utf8").on("data", (d: string) => {
      for (const l of d.split("\n").filter(Boolean)) onLine?.(l);
    });
    c.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`inserter exited ${code}`))));
  });
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? Number(s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!.toFixed(1)) : null;
};
const latencies = (xs: number[]) => ({ n: xs.length, p50: pct(xs, 50), p95: pct(xs, 95), max: pct(xs, 100) });
const load = async () => (await import("node:fs")).readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const mb = (n: number) => Math.round(n / 1048576);

async function main() {
  const AGENTS = Math.max(1, Number(process.argv[2] ?? 100));
  const SECONDS = Math.max(30, Number(process.argv[3] ?? 3600));
  const LIVE = Math.min(SECONDS - 10, Math.max(10, Number(process.argv[4] ?? 60)));
  const out: Record<string, unknown> = { agents: AGENTS, seconds: SECONDS, frames: AGENTS * SECONDS, loadAtStart: await load() };
  const stack = await startWebStack();
  const { base, web } = stack;
  const h = createDb(stack.dbUrl, 4);
  try {
    const { runId, plan } = await insertBenchRun(h.db, AGENTS, SECONDS);
    const auth = await readToken(stack.dbUrl);
    await web.waitFor(/ready/i, 120_000);
    let refused = 0;
    const timed = async (path: string): Promise<number> => {
      const t = performance.now();
      try {
        const res = await fetch(`${base}${path}`, { headers: auth });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
      } catch (err) {
        // A kept-alive socket the server closed meanwhile: counted, and the request made again.
        if (++refused > 20) throw err;
        return timed(path);
      }
      return performance.now() - t;
    };
    for (let i = 0; i < 5; i++) await timed(`/api/v1/runs/${runId}`); // warm the route

    const meter = new RunMeter({ db: h.db, runId, plan, log: pino({ level: "warn" }) });
    const follow = new AbortController();
    const following = meter.follow(follow.signal, 1000);

    // 1. live, real time.
    const half = Math.floor(LIVE / 2);
    const cpu0 = process.cpuUsage();
    const w0 = performance.now();
    const liveApi: number[] = [];
    let cpuQuiet: number | null = null;
    const live = runChild([stack.dbUrl, runId, "0", String(LIVE), "1"], (l) => {
      if (Number(l) === half && cpuQuiet === null) {
        const c = process.cpuUsage(cpu0);
        cpuQuiet = (c.user + c.system) / 1000 / (performance.now() - w0);
      }
      meter.nudge();
    });
    // The second half: the API polled 4 times a second, as a few CLIs and pages would.
    while (cpuQuiet === null) await sleep(100);
    const polling = (async () => {
      const done = { v: false };
      void live.then(() => (done.v = true));
      while (!done.v) {
        liveApi.push(await timed(`/api/v1/runs/${runId}`));
        await sleep(250);
      }
    })();
    await live;
    await polling;
    await meter.poll();
    out.live = {
      seconds: LIVE,
      framesPerSecond: AGENTS,
      meterCpuShareOfCore: `${Number((100 * cpuQuiet!).toFixed(2))} %`,
      apiRunWhileLive: latencies(liveApi),
      load: await load(),
    };
    process.stderr.write(`${JSON.stringify(out.live)}\n`);

    // 2. fill the rest as fast as it goes, the meter following.
    const total = AGENTS * SECONDS;
    const memory: Array<{ frames: number; heapMb: number; rssMb: number }> = [];
    let nextSample = 0.1;
    const fillCpu0 = process.cpuUsage();
    const fillFrames0 = meter.frames;
    const fillT0 = performance.now();
    const fillApi: number[] = [];
    let filling = true;
    const fill = runChild([stack.dbUrl, runId, String(LIVE), String(SECONDS), "0"], () => meter.nudge()).finally(() => (filling = false));
    const sampler = (async () => {
      while (filling || meter.frames < total) {
        if (meter.frames / total >= nextSample) {
          (globalThis as { gc?: () => void }).gc?.();
          const m = process.memoryUsage();
          memory.push({ frames: meter.frames, heapMb: mb(m.heapUsed), rssMb: mb(m.rss) });
          nextSample += 0.1;
        }
        if (fillApi.length < 400) fillApi.push(await timed(`/api/v1/runs/${runId}`));
        await sleep(250);
        if (!filling && meter.frames < total) await meter.poll();
      }
    })();
    await fill;
    await sampler;
    // A fill faster than the meter leaves the rest to one last poll: sample after it too, so the
    // series always ends with every frame folded.
    if ((memory.at(-1)?.frames ?? 0) < meter.frames) {
      (globalThis as { gc?: () => void }).gc?.();
      const m = process.memoryUsage();
      memory.push({ frames: meter.frames, heapMb: mb(m.heapUsed), rssMb: mb(m.rss) });
    }
    const fillCpu = process.cpuUsage(fillCpu0);
    const fillMs = performance.now() - fillT0;
    const folded = meter.frames - fillFrames0;
    const cpuMsPerFrame = (fillCpu.user + fillCpu.system) / 1000 / folded;
    out.fill = {
      frames: folded,
      wallSeconds: Math.round(fillMs / 1000),
      meterCpuMsPerFrame: Number(cpuMsPerFrame.toFixed(3)),
      // 100 frames a second at that cost (the live phase measures it directly).
      meterCpuAt100FramesPerSecond: `${Number(((cpuMsPerFrame * 100) / 10).toFixed(2))} %`,
      memory,
      apiRunWhileFilling: latencies(fillApi),
      load: await load(),
    };
    process.stderr.write(`${JSON.stringify(out.fill)}\n`);

    // 3. finalize as the hub does.
    follow.abort();
    await following;
    const f0 = performance.now();
    await meter.poll();
    await meter.reconcile();
    const summary = meter.summary(true);
    await finishRun(h.db, runId, { status: "passed", summary });
    await meter.saveFinal(summary);
    out.finalize = { ms: Math.round(performance.now() - f0), frames: meter.frames, expected: total, sent: summary?.messages.sent };

    // 4. after.
    const after = { run: [] as number[], intervals: [] as number[], analysis: [] as number[] };
    for (let i = 0; i < 200; i++) after.run.push(await timed(`/api/v1/runs/${runId}`));
    for (let i = 0; i < 10; i++) after.intervals.push(await timed(`/api/v1/runs/${runId}/intervals`));
    for (let i = 0; i < 10; i++) after.analysis.push(await timed(`/api/v1/runs/${runId}/analysis`));
    out.after = { apiRun: latencies(after.run), apiIntervals: latencies(after.intervals), apiAnalysis: latencies(after.analysis), load: await load() };
    process.stderr.write(`${JSON.stringify(out.after)}\n`);

    const cookie = await signUpCookie(base);
    const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_FLAGS], headless: true });
    const paints: number[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        const { context, page } = await signedInPage(browser, base, cookie);
        paints.push(await paintRunPage(page, base, runId, SECONDS));
        if (i === 0) await page.screenshot({ path: "/tmp/run-meter-hour.png" });
        await context.close();
      }
    } finally {
      await browser.close();
    }
    out.page = { firstPaintMs: paints.map(Math.round), load: await load() };
    out.retriedRequests = refused;
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
  } finally {
    await h.close();
    await stack.stop();
  }
}

if (process.argv[2] === "insert") {
  const [, , , url, runId, from, to, paced] = process.argv;
  await insertChild(url!, runId!, Number(from), Number(to), paced === "1");
  process.exit(0);
} else {
  await main();
  process.exit(0);
}
