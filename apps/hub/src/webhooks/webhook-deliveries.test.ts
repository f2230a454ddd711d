import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Queue } from "bullmq";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it, inject } from "vitest";
import "@volley/devstack/vitest-context";
import { runFinishedPayloadSchema } from "@volley/contracts";
import { createDb, createTestDatabase, createWebhook, DEFAULT_ORG_ID, listDeliveryAttempts, type DbHandle } from "@volley/db";
import { createRedis, enqueue, QUEUE_NAMES, webhookJob } from "@volley/queue";
import type { Redis } from "ioredis";
import { leaseRedisDb, type RedisDbLease } from "@volley/devstack";
import { slackText } from "./webhook-body";
import { WebhookWorker } from "./webhook-worker";

// The webhook worker against real local HTTP receivers: the body in the webhook's format (Volley's
// JSON or a Slack message), and every attempt written to the delivery log with the receiver's
// status, time and the start of its answer — also when it answered 500 or not at all.

let db: DbHandle;
let lease: RedisDbLease;
let redis: Redis;
let queue: Queue;
let worker: WebhookWorker;
let drop: () => Promise<void>;
let server: Server;
let url = "";
const got: { headers: IncomingHttpHeaders; body: string }[] = [];
let answer: { status: number; body: string } = { status: 200, body: "ok" };

beforeAll(async () => {
  const testDb = await createTestDatabase(inject("databaseServerUrl"));
  drop = testDb.drop;
  db = createDb(testDb.url, 2);
  lease = await leaseRedisDb(inject("redisUrl"));
  redis = createRedis(lease.url);
  queue = new Queue(QUEUE_NAMES.webhooks, { connection: redis });
  worker = new WebhookWorker({ db: db.db, connection: redis, log: pino({ level: "silent" }), timeoutMs: 1000 });
  worker.start();
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      got.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(answer.status, { "content-type": "text/plain" }).end(answer.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
});

afterAll(async () => {
  await worker?.close(true);
  await queue?.close();
  redis?.disconnect();
  await db?.close();
  await drop?.();
  await lease?.release();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
});

async function attemptsOf(deliveryId: string, n: number) {
  const deadline = Date.now() + 8000;
  for (;;) {
    const rows = await listDeliveryAttempts(db.db, deliveryId);
    if (rows.length >= n) return rows;
    if (Date.now() > deadline) throw new Error(`${deliveryId}: ${rows.length} of ${n} attempts recorded`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const finished = runFinishedPayloadSchema.parse({
  event: "run.finished",
  run: {
    id: "run_slack1",
    url: "https://volley.example.com/runs/run_slack1",
    name: "checkout <echo> & more",
    status: "failed",
    reason: "latency.p95 < 50ms: 73.2 ms",
    summary: {
      messages: { sent: 3000, received: 2990, lost: 10, duplicated: 0, outOfOrder: 0, sendRate: 1000, receiveRate: 996.7 },
      latency: { count: 2990, min: 1, mean: 20, p50: 15, p90: 60, p95: 73.2, p99: 140, max: 300 },
      sendLag: { count: 3000, min: 0, mean: 0.1, p50: 0.1, p90: 0.2, p95: 0.2, p99: 0.5, max: 2 },
      connect: { opened: 10, failed: 0, latency: { count: 10, min: 1, mean: 2, p50: 2, p90: 3, p95: 3, p99: 3, max: 3 } },
      errors: {},
      intervals: { measured: 3, warmup: 0, saturated: 0 },
      thresholds: [],
    },
  },
});

describe("webhook deliveries", () => {
  it("a restated run's Slack message says it corrects the earlier report", () => {
    const why = "measurements stored after the run ended (2 late frames) changed its outcome";
    const text = slackText({ ...finished, restatement: { previous: { status: "passed", reason: null }, why } });
    expect(text.split("\n")[1]).toBe(`_Corrected: ${why}; reported earlier as passed._`);
    // The last line links the run's page.
    expect(text.split("\n").at(-1)).toBe("<https://volley.example.com/runs/run_slack1|run `run_slack1`>");
  });

  it("a Slack-format webhook gets a Slack message (escaped), a generic one the run document; each attempt is logged with the answer", async () => {
    const slack = await createWebhook(db.db, { orgId: DEFAULT_ORG_ID, url, events: ["run.finished"], format: "slack" }, null);
    const generic = await createWebhook(db.db, { orgId: DEFAULT_ORG_ID, url, events: ["run.finished"] }, null);
    answer = { status: 200, body: "ok" };
    got.length = 0;
    await enqueue(queue, webhookJob, { webhookId: slack.id, payload: finished }, { jobId: "d-slack" });
    const [s] = await attemptsOf("d-slack", 1);
    await enqueue(queue, webhookJob, { webhookId: generic.id, payload: finished }, { jobId: "d-generic" });
    const [g] = await attemptsOf("d-generic", 1);

    const slackBody = JSON.parse(got.find((d) => d.headers["x-volley-delivery"] === "d-slack")!.body) as { text: string };
    expect(slackBody).toEqual({ text: slackText(finished) });
    expect(slackBody.text).toBe(
      [
        ":x: Volley run *checkout &lt;echo&gt; &amp; more* failed: latency.p95 &lt; 50ms: 73.2 ms",
        "p95 73.2 ms · p99 140 ms · 997/s received · 10 lost",
        "<https://volley.example.com/runs/run_slack1|run `run_slack1`>",
      ].join("\n"),
    );
    expect(JSON.parse(got.find((d) => d.headers["x-volley-delivery"] === "d-generic")!.body)).toEqual(finished);
    for (const row of [s!, g!]) {
      expect(row).toMatchObject({
        event: "run.finished",
        runId: "run_slack1",
        attempt: 1,
        test: false,
        status: 200,
        ok: true,
        error: null,
        responseExcerpt: "ok",
      });
      expect(row.durationMs).toBeGreaterThan(0);
    }
  });

  it("a test delivery that the receiver answers 500 is logged with the status and the start of the answer; an unreachable one with the error", async () => {
    const hook = await createWebhook(db.db, { orgId: DEFAULT_ORG_ID, url, events: ["run.finished"] }, null);
    answer = { status: 500, body: `upstream exploded: ${"x".repeat(2000)}` };
    const test = { event: "webhook.test" as const, webhook: { id: hook.id }, message: "hello" };
    await enqueue(queue, webhookJob, { webhookId: hook.id, payload: test }, { jobId: "d-test-500", attempts: 1 });
    const [failed] = await attemptsOf("d-test-500", 1);
    expect(failed).toMatchObject({
      event: "webhook.test",
      runId: null,
      test: true,
      status: 500,
      ok: false,
      error: `POST ${url} answered 500; a receiver must answer 2xx`,
    });
    expect(failed!.responseExcerpt).toHaveLength(500);
    expect(failed!.responseExcerpt!.startsWith("upstream exploded: xxx")).toBe(true);

    const down = await createWebhook(db.db, { orgId: DEFAULT_ORG_ID, url: "http://127.0.0.1:9/nothing-listens", events: ["run.finished"] }, null);
    await enqueue(queue, webhookJob, { webhookId: down.id, payload: { ...test, webhook: { id: down.id } } }, { jobId: "d-test-down", attempts: 1 });
    const [unreachable] = await attemptsOf("d-test-down", 1);
    expect(unreachable).toMatchObject({ status: null, ok: false, responseExcerpt: null });
    expect(unreachable!.error).toMatch(/^POST http:\/\/127\.0\.0\.1:9\/nothing-listens failed: .*ECONNREFUSED/);
  });
});
