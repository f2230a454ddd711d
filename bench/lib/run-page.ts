/**
 * What the run-page benches share (run-meter-hour.ts, run-page-paint.ts): the synthetic 100-agent
 * echo run they store (plan, shards, frames like an echo agent's), the stack they serve it from (a
 * fresh database, a throwaway redis-server and the production web build on free ports), a
 * signed-in session, and the page timing: navigation until the 4 charts hold every point and have
 * painted. Both must measure the page the same way, so their numbers compare.
 */
import { spawn } from "node:child_process";
import { planSchema, type IntervalFrame, type Plan } from "@volley/contracts";
import { createApiToken, createDb, createTestDatabase, DEFAULT_ORG_ID, insertRun, insertShards, markRunRunning, type Db, type ShardRow } from "@volley/db";
import { freePort, startApp, type ManagedProcess } from "@volley/devstack";
import { IntervalRecorder } from "@volley/metrics";
import type { Browser, BrowserContext, Page } from "playwright-core";

const SERVER_URL = process.env.VOLLEY_BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type FrameBody = Pick<IntervalFrame, "counters" | "histograms">;

/**
 * `count` distinct frame bodies like an echo agent's at ~500 round trips per second, reused round
 * robin (encoding one per frame would take longer than the run); every `spikeEvery`-th has a 30 ms spike.
 */
export function frameBodies(count: number, spikeEvery: number): FrameBody[] {
  const out = [];
  for (let b = 0; b < count; b++) {
    const r = new IntervalRecorder();
    const base = 1500 + 700 * Math.sin(b / 20) + (b % spikeEvery === 0 ? 30_000 : 0);
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

/** Shard `sh`'s frame of second `i` (the run started at `t0`), its body from `pool`; the first 5 s are warm-up. */
export function benchFrame(runId: string, sh: Pick<ShardRow, "id" | "index">, i: number, t0: number, pool: FrameBody[]): IntervalFrame {
  return {
    runId,
    shardId: sh.id,
    agentId: `agt_bench_${sh.index}`,
    seq: i,
    index: i,
    startedAt: t0 + i * 1000,
    durationMs: 1000,
    warmup: i < 5,
    ...pool[(sh.index * 37 + i) % pool.length]!,
    health: { cpu: 20 + (sh.index % 30), eventLoopDelayMs: { p50: 0.5, max: 2 }, rssMb: 140, sendLagMaxMs: 1.5, saturated: false },
  };
}

/** A running echo run of `agents` agents × `seconds`, with one shard per agent, as a hub would have started it. */
export async function insertBenchRun(db: Db, agents: number, seconds: number): Promise<{ runId: string; plan: Plan }> {
  const plan = planSchema.parse({
    name: "100 agents, one hour",
    target: { url: "ws://127.0.0.1:9001/echo" },
    connections: { count: agents * 50, rate: 1000 },
    scenario: { kind: "echo", message: { rate: 10 }, duration: `${seconds}s`, warmup: "5s" },
    thresholds: ["latency.p95 < 200ms", "errors.rate < 1%"],
    agents: { count: agents },
  });
  const run = await insertRun(db, { plan });
  await markRunRunning(db, run.id);
  await insertShards(
    db,
    run.id,
    Array.from({ length: agents }, () => plan),
  );
  return { runId: run.id, plan };
}

export interface WebStack {
  /** The fresh database's URL. */
  dbUrl: string;
  /** Web's origin, http://127.0.0.1:<port>. */
  base: string;
  web: ManagedProcess;
  /** Stops web and redis-server and drops the database. */
  stop(): Promise<void>;
}

/**
 * A fresh database, a redis-server of its own and the production web build (VOLLEY_NEXT_DIST_DIR in
 * the environment picks another build dir), on free ports. Web is started, not yet ready: `web.waitFor(/ready/i)`.
 */
export async function startWebStack(): Promise<WebStack> {
  const testDb = await createTestDatabase(SERVER_URL);
  const redisPort = await freePort();
  const redis = spawn("redis-server", ["--port", String(redisPort), "--save", "", "--appendonly", "no"], { stdio: "ignore" });
  const webPort = await freePort();
  const base = `http://127.0.0.1:${webPort}`;
  const web = startApp("web", {
    ...process.env,
    DATABASE_URL: testDb.url,
    REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    WEB_PORT: String(webPort),
    WEB_HOST: "127.0.0.1",
    VOLLEY_PUBLIC_URL: base,
    // web refuses to start without one (nothing derives it).
    AUTH_SECRET: "bench-web-stack-auth-secret-0123456789abcdef",
    LOG_LEVEL: "info",
  });
  return {
    dbUrl: testDb.url,
    base,
    web,
    async stop() {
      await web.stop();
      redis.kill();
      await sleep(200);
      await testDb.drop().catch(() => {});
    },
  };
}

/** A read-only API token of the default org, as `Authorization` headers. */
export async function readToken(dbUrl: string): Promise<{ authorization: string }> {
  const h = createDb(dbUrl, 1);
  try {
    const { secret } = await createApiToken(h.db, { orgId: DEFAULT_ORG_ID, name: "bench", scopes: ["read"] });
    return { authorization: `Bearer ${secret}` };
  } finally {
    await h.close();
  }
}

/** Signs a user up through web (the first one, so a member of the default org) and returns its session cookie, `name=value`. */
export async function signUpCookie(base: string): Promise<string> {
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
  return cookie;
}

/** A fresh browser context signed in with `cookie` (a laptop-sized viewport), and a page in it. */
export async function signedInPage(browser: Browser, base: string, cookie: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  await context.addCookies([{ name: cookie.slice(0, cookie.indexOf("=")), value: cookie.slice(cookie.indexOf("=") + 1), url: base }]);
  return { context, page: await context.newPage() };
}

/** Opens the run page and returns the ms until its charts hold all `points` and have painted (canvas present, two animation frames). */
export async function paintRunPage(page: Page, base: string, runId: string, points: number): Promise<number> {
  const t = performance.now();
  await page.goto(`${base}/runs/${runId}`);
  await page.locator(`[data-testid="run-charts"][data-points="${points}"]`).waitFor({ timeout: 120_000 });
  await page.locator(".chart canvas").first().waitFor();
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  return performance.now() - t;
}
