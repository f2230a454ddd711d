/**
 * The run page with a one-hour run at one-second resolution: 3,600 stored intervals (real
 * HdrHistograms, two shards), rendered by the real web app (production build) in Debian's
 * Chromium. Measured: time from navigation until every chart holds all 3,600 points, the page's
 * longest main-thread task while loading, and how long the charts take to follow the cursor
 * (mouse moved across the latency chart, 60 steps) and a zoom drag. The stack, sign-up and viewport
 * (1440×900 since Session 16; 1280×800 before) are lib/run-page.ts's, as the other run-page benches'.
 *
 * Usage: node --import tsx bench/chart-render.ts [runs=3]
 * Needs `apps/web` built (`npm run build`), PostgreSQL (VOLLEY_BENCH_DATABASE_URL, default the local
 * server), `redis-server` on PATH and /usr/bin/chromium.
 */
import { planSchema } from "@volley/contracts";
import { createDb, finishRun, insertFrames, insertRun, insertShards, markRunRunning } from "@volley/db";
import { CHROMIUM_FLAGS, CHROMIUM_PATH } from "@volley/devstack";
import { IntervalRecorder, summarizeRun } from "@volley/metrics";
import { chromium } from "playwright-core";
import { signedInPage, signUpCookie, startWebStack } from "./lib/run-page";

const RUNS = Math.min(9, Math.max(1, Number(process.argv[2] ?? 3)));
const SECONDS = 3600;

async function seed(url: string): Promise<string> {
  const h = createDb(url, 2);
  try {
    const plan = planSchema.parse({
      name: "one hour",
      target: { url: "ws://127.0.0.1:9001/echo" },
      connections: { count: 200, rate: 200 },
      scenario: { kind: "echo", message: { rate: 10 }, duration: "1h" },
      agents: { count: 2 },
    });
    const run = await insertRun(h.db, { plan });
    await markRunRunning(h.db, run.id);
    const shards = await insertShards(h.db, run.id, [plan, plan]);
    const t0 = Date.now() - SECONDS * 1000;
    const frames = [];
    for (let i = 0; i < SECONDS; i++) {
      for (const [n, shard] of shards.entries()) {
        const r = new IntervalRecorder();
        // A slow drift and a few spikes, so the percentile bands have something to draw.
        const base = 2000 + 800 * Math.sin(i / 300) + (i % 600 === 0 ? 40_000 : 0);
        for (let k = 0; k < 1000; k++) r.recordMicros("message.latency", base + Math.random() ** 3 * 20_000);
        for (let k = 0; k < 1000; k++) r.recordMicros("message.send_lag", Math.random() * 500);
        r.increment("messages.sent", 1000);
        r.increment("messages.received", 1000);
        r.setGauge("connections.active", 100);
        const health = { cpu: 30 + n, eventLoopDelayMs: { p50: 0.5, max: 2 }, rssMb: 150, sendLagMaxMs: 1, saturated: i % 997 === 0 };
        frames.push({
          runId: run.id,
          shardId: shard.id,
          agentId: `agt_bench${n}`,
          seq: i,
          index: i,
          startedAt: t0 + i * 1000,
          durationMs: 1000,
          warmup: false,
          ...r.take(),
          health,
        });
      }
      if (frames.length >= 1000) await insertFrames(h.db, frames.splice(0));
    }
    await insertFrames(h.db, frames);
    const { listFrames } = await import("@volley/db");
    const summary = summarizeRun(await listFrames(h.db, run.id), plan.thresholds, plan);
    await finishRun(h.db, run.id, { status: "passed", summary });
    return run.id;
  } finally {
    await h.close();
  }
}

async function once(run: number) {
  const stack = await startWebStack();
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_FLAGS], headless: true });
  try {
    const runId = await seed(stack.dbUrl);
    await stack.web.waitFor(/ready/i, 90_000);
    const base = stack.base;
    const { context, page } = await signedInPage(browser, base, await signUpCookie(base));
    await page.addInitScript(() => {
      const w = window as unknown as { __longest: number };
      w.__longest = 0;
      // "longtask" is Chromium's (Long Tasks API); @types/node's PerformanceObserver types lack it.
      new PerformanceObserver((l) => {
        for (const e of l.getEntries()) w.__longest = Math.max(w.__longest, e.duration);
      }).observe({ type: "longtask" as import("node:perf_hooks").EntryType, buffered: true });
    });
    const start = performance.now();
    await page.goto(`${base}/runs/${runId}`);
    await page.locator(`[data-testid="run-charts"][data-points="${SECONDS}"]`).waitFor({ timeout: 60_000 });
    await page.locator(".chart canvas").first().waitFor();
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const loadMs = performance.now() - start;
    const longestLoadTaskMs = await page.evaluate(() => (window as unknown as { __longest: number }).__longest);

    const box = (await page.locator(".chart canvas").first().boundingBox())!;
    await page.evaluate(() => ((window as unknown as { __longest: number }).__longest = 0));
    const hover0 = performance.now();
    for (let i = 0; i <= 60; i++) await page.mouse.move(box.x + (box.width * i) / 60, box.y + box.height / 2);
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(r)));
    const hoverMsPerStep = (performance.now() - hover0) / 61;
    const zoom0 = performance.now();
    await page.mouse.move(box.x + box.width * 0.3, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.5, box.y + box.height / 2, { steps: 5 });
    await page.mouse.up();
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const zoomMs = performance.now() - zoom0;
    const longestInteractionTaskMs = await page.evaluate(() => (window as unknown as { __longest: number }).__longest);
    const result = {
      run,
      points: SECONDS,
      loadMs: Math.round(loadMs),
      longestLoadTaskMs: Math.round(longestLoadTaskMs),
      hoverMsPerStep: Number(hoverMsPerStep.toFixed(1)),
      zoomMs: Math.round(zoomMs),
      longestInteractionTaskMs: Math.round(longestInteractionTaskMs),
    };
    process.stderr.write(`${JSON.stringify(result)}\n`);
    await context.close();
    return result;
  } finally {
    await browser.close();
    await stack.stop();
  }
}

const results: Awaited<ReturnType<typeof once>>[] = [];
for (let r = 1; r <= RUNS; r++) results.push(await once(r));
const median = (k: keyof (typeof results)[number]) => [...results.map((r) => Number(r[k]))].sort((a, b) => a - b)[Math.floor(results.length / 2)];
process.stdout.write(
  `${JSON.stringify({ median: { loadMs: median("loadMs"), longestLoadTaskMs: median("longestLoadTaskMs"), hoverMsPerStep: median("hoverMsPerStep"), zoomMs: median("zoomMs"), longestInteractionTaskMs: median("longestInteractionTaskMs") }, results }, null, 2)}\n`,
);
process.exit(0);
