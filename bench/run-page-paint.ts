/**
 * The run page's first paint for a finished 100 agents × 1 hour run (issue 17), without
 * run-meter-hour's 360,000-frame fill: 100 agents × SAMPLE seconds of real frames are folded by the
 * hub's RunMeter (summary and analysis with 100 agents, as the full run has), then its merged
 * seconds are repeated to 3,600 run_points rows. The production web build is started and the page
 * loaded in Chromium, as run-meter-hour measures it: navigation until the 4 charts hold every point
 * and have painted (canvas present, two rAFs). The first navigation after the server started is
 * "cold" (a few API requests only went before it, as in run-meter-hour), the rest "warm", each in a
 * fresh browser context. Per navigation also: TTFB, the HTML and JS bytes, the longest main-thread
 * task, and the charts' data-ready time against the navigation's start.
 *
 * Usage: node --import tsx bench/run-page-paint.ts [warm=4] [seconds=3600]
 * Needs the web build (`npm run build -w @volley/web`, hold /tmp/volley-web.lock; VOLLEY_NEXT_DIST_DIR
 * picks another build dir), PostgreSQL (VOLLEY_BENCH_DATABASE_URL, default the local server),
 * `redis-server` on PATH, /usr/bin/chromium. BENCH_SCREENSHOT=path saves the cold page.
 */
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { planSchema, type IntervalFrame } from "@volley/contracts";
import {
  createApiToken,
  createDb,
  createTestDatabase,
  DEFAULT_ORG_ID,
  finishRun,
  insertFrames,
  insertRun,
  insertShards,
  listRunPointRows,
  listShards,
  markRunRunning,
  upsertRunPoints,
} from "@volley/db";
import { CHROMIUM_FLAGS, CHROMIUM_PATH, freePort, startApp } from "@volley/devstack";
import { IntervalRecorder } from "@volley/metrics";
import { chromium } from "playwright-core";
import { pino } from "pino";
import { RunMeter } from "../apps/hub/src/runs/run-meter";

const SERVER_URL = process.env.VOLLEY_BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const AGENTS = 100;
/** Seconds of real frames folded by the meter; the timeline repeats their merged points. */
const SAMPLE = 30;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

/** 64 frame bodies like an echo agent's at ~500 round trips per second (as run-meter-hour's), reused round robin. */
function bodies(): Array<Pick<IntervalFrame, "counters" | "histograms">> {
  const out = [];
  for (let b = 0; b < 64; b++) {
    const r = new IntervalRecorder();
    const base = 1500 + 700 * Math.sin(b / 20) + (b % 32 === 0 ? 30_000 : 0);
    for (let k = 0; k < 500; k++) r.recordMicros("message.latency", base + Math.random() ** 3 * 25_000);
    for (let k = 0; k < 500; k++) r.recordMicros("message.send_lag", Math.random() ** 4 * 2000);
    r.increment("messages.sent", 500);
    r.increment("messages.received", 500 - (b % 50 === 0 ? 1 : 0));
    if (b % 50 === 0) r.increment("messages.lost", 1);
    r.setGauge("connections.active", 50);
    out.push(r.take());
  }
  return out;
}

async function seed(url: string, seconds: number): Promise<string> {
  const h = createDb(url, 4);
  try {
    const plan = planSchema.parse({
      name: "100 agents, one hour",
      target: { url: "ws://127.0.0.1:9001/echo" },
      connections: { count: AGENTS * 50, rate: 1000 },
      scenario: { kind: "echo", message: { rate: 10 }, duration: `${seconds}s`, warmup: "5s" },
      thresholds: ["latency.p95 < 200ms", "errors.rate < 1%"],
      agents: { count: AGENTS },
    });
    const run = await insertRun(h.db, { plan });
    await markRunRunning(h.db, run.id);
    await insertShards(
      h.db,
      run.id,
      Array.from({ length: AGENTS }, () => plan),
    );
    const shards = await listShards(h.db, run.id);
    const pool = bodies();
    const t0 = Date.now() - seconds * 1000;
    for (let i = 0; i < SAMPLE; i++) {
      await insertFrames(
        h.db,
        shards.map((sh) => ({
          runId: run.id,
          shardId: sh.id,
          agentId: `agt_bench_${sh.index}`,
          seq: i,
          index: i,
          startedAt: t0 + i * 1000,
          durationMs: 1000,
          warmup: i < 5,
          ...pool[(sh.index * 37 + i) % pool.length]!,
          health: { cpu: 20 + (sh.index % 30), eventLoopDelayMs: { p50: 0.5, max: 2 }, rssMb: 140, sendLagMaxMs: 1.5, saturated: false },
        })),
      );
    }
    const meter = await RunMeter.replay({ db: h.db, runId: run.id, plan, log: pino({ level: "warn" }) });
    await meter.reconcile();
    const summary = meter.summary(true);
    await finishRun(h.db, run.id, { status: "passed", summary });
    await meter.saveFinal(summary);
    // The rest of the hour: the sampled seconds' merged points again, past the warm-up.
    const sample = (await listRunPointRows(h.db, run.id)).filter((r) => r.index >= 5);
    for (let from = SAMPLE; from < seconds; from += 500) {
      const batch = [];
      for (let i = from; i < Math.min(seconds, from + 500); i++) {
        const row = sample[i % sample.length]!;
        batch.push({ point: { ...row.point, index: i, t: t0 + i * 1000, warmup: false }, histograms: row.histograms, frames: row.frames });
      }
      await upsertRunPoints(h.db, run.id, batch);
    }
    return run.id;
  } finally {
    await h.close();
  }
}

interface TraceEvent {
  name: string;
  ph: string;
  ts: number;
  dur?: number;
  tid: number;
  pid: number;
  args?: { data?: { url?: string } };
}

/** BENCH_TRACE: the last warm navigation's renderer main thread, top-level tasks' children by event name (ms, nested time counted once per level). */
function printTrace(events: TraceEvent[]) {
  const main = events.find((e) => e.name === "thread_name" && (e.args as { name?: string } | undefined)?.name === "CrRendererMain");
  const mine = events.filter((e) => main && e.pid === main.pid && e.tid === main.tid && e.ph === "X" && e.dur !== undefined);
  const t0 = Math.min(...mine.map((e) => e.ts));
  const byName = new Map<string, number>();
  for (const e of mine) if (e.name !== "RunTask" && e.name !== "ThreadControllerImpl::RunTask") byName.set(e.name, (byName.get(e.name) ?? 0) + e.dur! / 1000);
  const tasks = mine.filter((e) => e.name === "RunTask" && e.dur! > 30_000).map((e) => `${Math.round((e.ts - t0) / 1000)}+${Math.round(e.dur! / 1000)}`);
  for (const task of mine.filter((e) => e.name === "RunTask" && e.dur! > 100_000)) {
    const inside = new Map<string, number>();
    for (const e of mine)
      if (
        e !== task &&
        e.ts >= task.ts &&
        e.ts + e.dur! <= task.ts + task.dur! &&
        [
          "FunctionCall",
          "EvaluateScript",
          "RunMicrotasks",
          "Layout",
          "UpdateLayoutTree",
          "ParseHTML",
          "Paint",
          "EventDispatch",
          "TimerFire",
          "FireAnimationFrame",
          "V8.GC_SCAVENGER",
          "FunctionCall",
        ].includes(e.name)
      ) {
        const url = e.args?.data?.url?.split("/").pop();
        const k = `${e.name}${url ? ` ${url}` : ""}`;
        inside.set(k, (inside.get(k) ?? 0) + e.dur! / 1000);
      }
    process.stderr.write(
      `  task at ${Math.round((task.ts - t0) / 1000)} (${Math.round(task.dur! / 1000)} ms): ${[...inside]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 6)
        .map(([k, v]) => `${k} ${Math.round(v)}`)
        .join(", ")}\n`,
    );
  }
  const top = [...byName].sort((a, b) => b[1] - a[1]).slice(0, 25);
  process.stderr.write(`trace: tasks over 30 ms (start+ms): ${tasks.join(" ")}\n  ${top.map(([k, v]) => `${Math.round(v)} ms ${k}`).join("\n  ")}\n`);
}

/** BENCH_PROFILE: where the last warm navigation's main-thread JS time went, by function and by script (self time, ms). */
function printProfile(profile: {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number }; hitCount?: number }>;
  samples?: number[];
  timeDeltas?: number[];
}) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  (profile.samples ?? []).forEach((id, k) => {
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas?.[k] ?? 0) / 1000);
  });
  const fns = new Map<string, number>();
  const urls = new Map<string, number>();
  for (const [id, ms] of self) {
    const f = byId.get(id)!.callFrame;
    const file = f.url.split("/").pop() || "(native)";
    fns.set(
      `${f.functionName || "(anon)"} ${file}:${f.lineNumber}:${f.columnNumber}`,
      (fns.get(`${f.functionName || "(anon)"} ${file}:${f.lineNumber}:${f.columnNumber}`) ?? 0) + ms,
    );
    urls.set(file, (urls.get(file) ?? 0) + ms);
  }
  const top = (m: Map<string, number>, n: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => `${Math.round(v)} ms ${k}`);
  process.stderr.write(`profile by script:\n  ${top(urls, 15).join("\n  ")}\nprofile by function:\n  ${top(fns, 30).join("\n  ")}\n`);
}

async function main() {
  const WARM = Math.max(0, Number(process.argv[2] ?? 4));
  const SECONDS = Math.max(SAMPLE + 1, Number(process.argv[3] ?? 3600));
  const out: Record<string, unknown> = { seconds: SECONDS, agents: AGENTS, loadAtStart: load() };
  const testDb = await createTestDatabase(SERVER_URL);
  const redisPort = await freePort();
  const redis = spawn("redis-server", ["--port", String(redisPort), "--save", "", "--appendonly", "no"], { stdio: "ignore" });
  const webPort = await freePort();
  const web = startApp("web", {
    ...process.env,
    DATABASE_URL: testDb.url,
    REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    WEB_PORT: String(webPort),
    WEB_HOST: "127.0.0.1",
    VOLLEY_PUBLIC_URL: `http://127.0.0.1:${webPort}`,
    LOG_LEVEL: "info",
  });
  const base = `http://127.0.0.1:${webPort}`;
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_FLAGS], headless: true });
  try {
    const runId = await seed(testDb.url, SECONDS);
    await web.waitFor(/ready/i, 120_000);
    const h = createDb(testDb.url, 1);
    const { secret } = await createApiToken(h.db, { orgId: DEFAULT_ORG_ID, name: "bench", scopes: ["read"] });
    await h.close();
    // As run-meter-hour: the API was asked before the page (its route warm, the page's not).
    for (let i = 0; i < 5; i++) await (await fetch(`${base}/api/v1/runs/${runId}`, { headers: { authorization: `Bearer ${secret}` } })).arrayBuffer();
    const res = await fetch(`${base}/api/auth/sign-up/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: base },
      body: JSON.stringify({ email: "bench@example.com", password: "correct horse battery", name: "Bench" }),
    });
    const cookie = res.headers
      .getSetCookie()
      .map((c) => c.split(";")[0]!)
      .find((c) => c.includes("session_token"));
    if (!cookie) throw new Error(`sign-up answered ${res.status}: ${await res.text()}`);
    // run-meter-hour's page was opened an hour after the server started: its start-up work (Next
    // preloads every route's modules in the background) was long done. Let it finish here too.
    await sleep(Number(process.env.BENCH_SETTLE_MS ?? 5000));
    if (process.env.BENCH_SERVER_PROBE) {
      // Diagnosis (makes the browser's "cold" warm on the server): the server's first renders, timed from here.
      const probe = [];
      for (const path of process.env.BENCH_SERVER_PROBE.split(",")) {
        const t = performance.now();
        const r = await fetch(`${base}${path.replace("RUN", runId)}`, { headers: { cookie }, redirect: "manual" });
        await r.arrayBuffer();
        probe.push(`${path} ${r.status} ${Math.round(performance.now() - t)} ms`);
      }
      process.stderr.write(`server probe: ${probe.join(", ")}\n`);
    }
    const navs = [];
    for (let i = 0; i <= WARM; i++) {
      const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
      await context.addCookies([{ name: cookie.slice(0, cookie.indexOf("=")), value: cookie.slice(cookie.indexOf("=") + 1), url: base }]);
      const page = await context.newPage();
      await page.addInitScript(() => {
        const w = window as unknown as { __longest: number; __tasks: number };
        w.__longest = 0;
        w.__tasks = 0;
        new PerformanceObserver((l) => {
          for (const e of l.getEntries()) {
            w.__longest = Math.max(w.__longest, e.duration);
            w.__tasks += e.duration;
          }
        }).observe({ type: "longtask" as import("node:perf_hooks").EntryType, buffered: true });
      });
      const profiling = process.env.BENCH_PROFILE !== undefined && i === WARM;
      const cdp = profiling ? await context.newCDPSession(page) : null;
      if (cdp) {
        await cdp.send("Profiler.enable");
        await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
        await cdp.send("Profiler.start");
      }
      const tracing = process.env.BENCH_TRACE !== undefined && i === WARM ? await context.newCDPSession(page) : null;
      const traceEvents: TraceEvent[] = [];
      if (tracing) {
        tracing.on("Tracing.dataCollected", (e) => {
          traceEvents.push(...(e.value as unknown as TraceEvent[]));
        });
        await tracing.send("Tracing.start", { categories: "devtools.timeline,v8.execute,disabled-by-default-devtools.timeline", transferMode: "ReportEvents" });
      }
      const t = performance.now();
      await page.goto(`${base}/runs/${runId}`);
      await page.locator(`[data-testid="run-charts"][data-points="${SECONDS}"]`).waitFor({ timeout: 120_000 });
      await page.locator(".chart canvas").first().waitFor();
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      const paintMs = performance.now() - t;
      if (tracing) {
        const done = new Promise((r) => tracing.once("Tracing.tracingComplete", r));
        await tracing.send("Tracing.end");
        await done;
        printTrace(traceEvents);
      }
      if (cdp) printProfile((await cdp.send("Profiler.stop")).profile);
      const timing = await page.evaluate(() => {
        const nav = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming;
        const res = performance.getEntriesByType("resource") as PerformanceResourceTiming[];
        const w = window as unknown as { __longest: number; __tasks: number };
        const js = res.filter((r) => r.name.endsWith(".js"));
        return {
          ttfbMs: Math.round(nav.responseStart),
          htmlDoneMs: Math.round(nav.responseEnd),
          htmlKb: Math.round(nav.encodedBodySize / 1024),
          htmlDecodedKb: Math.round(nav.decodedBodySize / 1024),
          domContentLoadedMs: Math.round(nav.domContentLoadedEventEnd),
          paintedAtMs: Math.round(performance.now()),
          jsFiles: js.length,
          jsKb: Math.round(js.reduce((n, r) => n + r.encodedBodySize, 0) / 1024),
          lastJsMs: Math.round(Math.max(0, ...js.map((r) => r.responseEnd))),
          fetches: res
            .filter((r) => r.initiatorType === "fetch")
            .map((r) => `${new URL(r.name).pathname} ${Math.round(r.startTime)}-${Math.round(r.responseEnd)}`),
          longestTaskMs: Math.round(w.__longest),
          longTasksMs: Math.round(w.__tasks),
        };
      });
      navs.push({ kind: i === 0 ? "cold" : "warm", paintMs: Math.round(paintMs), ...timing, load: load() });
      process.stderr.write(`${JSON.stringify(navs.at(-1))}\n`);
      if (i === 0 && process.env.BENCH_HTML) writeFileSync(process.env.BENCH_HTML, await (await page.request.get(`${base}/runs/${runId}`)).text());
      if (i === 0 && process.env.BENCH_SCREENSHOT) await page.screenshot({ path: process.env.BENCH_SCREENSHOT, fullPage: true });
      await context.close();
    }
    const warm = navs.slice(1).map((n) => n.paintMs);
    out.cold = navs[0]!.paintMs;
    out.warm = warm;
    out.warmMedian = [...warm].sort((a, b) => a - b)[Math.floor(warm.length / 2)] ?? null;
    out.navigations = navs;
    out.loadAtEnd = load();
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
  } finally {
    await browser.close();
    await web.stop();
    redis.kill();
    await sleep(200);
    await testDb.drop().catch(() => {});
  }
}

await main();
process.exit(0);
