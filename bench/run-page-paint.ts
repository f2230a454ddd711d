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
import { readFileSync, writeFileSync } from "node:fs";
import { createDb, finishRun, insertFrames, listRunPointRows, listShards, upsertRunPoints } from "@volley/db";
import { CHROMIUM_FLAGS, CHROMIUM_PATH } from "@volley/devstack";
import { chromium } from "playwright-core";
import { pino } from "pino";
import { RunMeter } from "../apps/hub/src/runs/run-meter";
import { benchFrame, frameBodies, insertBenchRun, paintRunPage, readToken, signedInPage, signUpCookie, sleep, startWebStack } from "./lib/run-page";

const AGENTS = 100;
/** Seconds of real frames folded by the meter; the timeline repeats their merged points. */
const SAMPLE = 30;
const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

async function seed(url: string, seconds: number): Promise<string> {
  const h = createDb(url, 4);
  try {
    const { runId, plan } = await insertBenchRun(h.db, AGENTS, seconds);
    const shards = await listShards(h.db, runId);
    const pool = frameBodies(64, 32);
    const t0 = Date.now() - seconds * 1000;
    for (let i = 0; i < SAMPLE; i++) {
      await insertFrames(
        h.db,
        shards.map((sh) => benchFrame(runId, sh, i, t0, pool)),
      );
    }
    const meter = await RunMeter.replay({ db: h.db, runId, plan, log: pino({ level: "warn" }) });
    await meter.reconcile();
    const summary = meter.summary(true);
    await finishRun(h.db, runId, { status: "passed", summary });
    await meter.saveFinal(summary);
    // The rest of the hour: the sampled seconds' merged points again, past the warm-up.
    const sample = (await listRunPointRows(h.db, runId)).filter((r) => r.index >= 5);
    for (let from = SAMPLE; from < seconds; from += 500) {
      const batch = [];
      for (let i = from; i < Math.min(seconds, from + 500); i++) {
        const row = sample[i % sample.length]!;
        batch.push({ point: { ...row.point, index: i, t: t0 + i * 1000, warmup: false }, histograms: row.histograms, frames: row.frames });
      }
      await upsertRunPoints(h.db, runId, batch);
    }
    return runId;
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
  const stack = await startWebStack();
  const { base, web } = stack;
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_FLAGS], headless: true });
  try {
    const runId = await seed(stack.dbUrl, SECONDS);
    await web.waitFor(/ready/i, 120_000);
    const auth = await readToken(stack.dbUrl);
    // As run-meter-hour: the API was asked before the page (its route warm, the page's not).
    for (let i = 0; i < 5; i++) await (await fetch(`${base}/api/v1/runs/${runId}`, { headers: auth })).arrayBuffer();
    const cookie = await signUpCookie(base);
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
      const { context, page } = await signedInPage(browser, base, cookie);
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
      const paintMs = await paintRunPage(page, base, runId, SECONDS);
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
    await stack.stop();
  }
}

await main();
process.exit(0);
