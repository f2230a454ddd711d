import { createHmac, randomBytes } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Queue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runFinishedPayloadSchema } from "@volley/contracts";
import { eq } from "drizzle-orm";
import { createWebhook, DEFAULT_ORG_ID, disableWebhook, isSealed, parseSecretKeys, schema, type WebhookRow } from "@volley/db";
import { QUEUE_NAMES } from "@volley/queue";
import { useHubHarness } from "../test-support/use-hub-harness";
import { testFrame, testPlan } from "../test-support/fixtures";

// Signed run.finished webhooks, delivered by the hub to real local HTTP receivers.

interface Delivery {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A real HTTP receiver on port 0 answering each request with the next scripted reply (then 200). */
class Receiver {
  readonly deliveries: Delivery[] = [];
  private readonly hanging: ServerResponse[] = [];
  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly script: Array<number | "hang">,
  ) {}

  static async start(script: Array<number | "hang"> = []): Promise<Receiver> {
    let self: Receiver | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => self!.answer({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") }, res));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    self = new Receiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, [...script]);
    return self;
  }

  private answer(d: Delivery, res: ServerResponse): void {
    this.deliveries.push(d);
    const next = this.script.shift() ?? 200;
    if (next === "hang") return void this.hanging.push(res);
    res.writeHead(next, { "content-type": "text/plain" }).end(next === 200 ? "ok" : "nope");
  }

  async waitFor(n: number, timeoutMs = 20_000): Promise<Delivery[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.deliveries.length < n) {
      if (Date.now() > deadline) throw new Error(`receiver got ${this.deliveries.length} of ${n} deliveries within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return this.deliveries;
  }

  close(): Promise<void> {
    for (const r of this.hanging) r.destroy();
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const ORG_B = "org_webhooks_b";
// The hub seals and opens secrets with this key, as web and hub share VOLLEY_SECRETS_KEY.
const KEYS = parseSecretKeys(randomBytes(32).toString("base64"));
const h = useHubHarness({
  armTimeoutMs: 10_000,
  storeWaitMs: 5000,
  webhookRetryDelayMs: 100,
  webhookTimeoutMs: 500,
  secretsKeys: KEYS,
  publicUrl: "https://volley.example.com",
});
let queue: Queue;
const receivers: Receiver[] = [];

beforeAll(async () => {
  await h.db.db.insert(schema.orgs).values({ id: ORG_B, name: "B", slug: "webhooks-b" });
  queue = new Queue(QUEUE_NAMES.webhooks, { connection: h.redis });
});
afterAll(async () => {
  await queue?.close();
  await Promise.all(receivers.map((r) => r.close()));
});

async function receiver(script: Array<number | "hang"> = []): Promise<Receiver> {
  const r = await Receiver.start(script);
  receivers.push(r);
  return r;
}

/** A real run of the default org through a scripted agent: one frame, then completed (passes). */
async function finishedRun(pool: string): Promise<string> {
  const a = await h.connect({ name: `wh-${pool}`, pool });
  const runId = await h.startRun(testPlan({ name: `webhook ${pool}`, agents: { pool }, thresholds: ["latency.p95 < 200ms"] }));
  const job = await a.until((r) => r.assign.find((j) => j.runId === runId), 10_000, "shard.assign");
  const start = await a.nextStart();
  await a.sendFrame(testFrame({ runId, shardId: job.shardId, agentId: a.agentId }, 0, [5, 7, 9], { startedAt: start.startAt }));
  await a.end({ runId, shardId: job.shardId, status: "completed", frames: 1 });
  expect((await h.waitForFinal(runId)).status).toBe("passed");
  return runId;
}

const hmac = (hook: WebhookRow, body: string) => `sha256=${createHmac("sha256", hook.secret).update(body).digest("hex")}`;

/** The delivery job once it has completed or finally failed (retries in between are `delayed`). */
async function jobOf(id: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = await queue.getJobState(id);
    // The job is read after its state is final: read before, its attempt count could predate the last attempt.
    if (state === "completed" || state === "failed") return { job: (await queue.getJob(id))!, state };
    if (Date.now() > deadline) throw new Error(`delivery ${id} still ${state}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("run.finished webhooks", () => {
  it("POST the run, signed with the webhook's secret; other orgs' and deleted webhooks never fire", async () => {
    const [mine, theirs, deleted] = [await receiver(), await receiver(), await receiver()];
    const hook = await createWebhook(h.db.db, { orgId: DEFAULT_ORG_ID, url: mine.url, events: ["run.finished"] }, KEYS);
    const other = await createWebhook(h.db.db, { orgId: ORG_B, url: theirs.url, events: ["run.finished"] }, KEYS);
    const gone = await createWebhook(h.db.db, { orgId: DEFAULT_ORG_ID, url: deleted.url, events: ["run.finished"] }, KEYS);
    expect(await disableWebhook(h.db.db, DEFAULT_ORG_ID, gone.id)).toBe(true);

    const runId = await finishedRun("wh-signed");
    const [d] = await mine.waitFor(1);
    expect(d!.headers["content-type"]).toBe("application/json");
    expect(d!.headers["x-volley-event"]).toBe("run.finished");
    expect(d!.headers["x-volley-delivery"]).toBe(`whd-${runId}-${hook.id}`);
    expect(d!.headers["x-volley-signature"]).toBe(hmac(hook, d!.body));
    // A receiver holding another secret would reject it.
    expect(d!.headers["x-volley-signature"]).not.toBe(hmac(other, d!.body));
    const body = runFinishedPayloadSchema.parse(JSON.parse(d!.body));
    expect(body.run).toMatchObject({ id: runId, name: "webhook wh-signed", status: "passed", reason: null });
    // A link to the run's page, at the origin users reach web at.
    expect(body.run.url).toBe(`https://volley.example.com/runs/${runId}`);
    expect(body.run.summary?.messages.sent).toBe(3);
    expect(body.run.summary?.thresholds[0]).toMatchObject({ expression: "latency.p95 < 200ms", ok: true });

    expect((await jobOf(`whd-${runId}-${hook.id}`)).state).toBe("completed");
    // One job per live webhook of the run's org, and no other.
    const all = await queue.getJobs(["completed", "failed", "active", "waiting", "delayed"]);
    expect(all.filter((j) => j.data.payload.run.id === runId).map((j) => j.data.webhookId)).toEqual([hook.id]);
    expect(theirs.deliveries).toHaveLength(0);
    expect(deleted.deliveries).toHaveLength(0);
  });

  it("the secret is stored sealed, never as the plain text; the hub still signs with it, and a row from before encryption is sealed on first delivery", async () => {
    const r = await receiver();
    const hook = await createWebhook(h.db.db, { orgId: DEFAULT_ORG_ID, url: r.url, events: ["run.finished"] }, KEYS);
    const stored = async (id: string) => (await h.db.db.select().from(schema.webhooks).where(eq(schema.webhooks.id, id)))[0]!.secret;
    const sealed = await stored(hook.id);
    expect(isSealed(sealed)).toBe(true);
    expect(sealed).not.toContain(hook.secret.slice("whsec_".length));
    // A webhook created before secrets were encrypted: stored as is.
    const legacy = await createWebhook(h.db.db, { orgId: DEFAULT_ORG_ID, url: r.url, events: ["run.finished"] }, null);
    expect(await stored(legacy.id)).toBe(legacy.secret);

    const runId = await finishedRun("wh-sealed");
    const got = await r.waitFor(2);
    const byHook = (id: string) => got.find((d) => d.headers["x-volley-delivery"] === `whd-${runId}-${id}`)!;
    expect(byHook(hook.id).headers["x-volley-signature"]).toBe(hmac(hook, byHook(hook.id).body));
    expect(byHook(legacy.id).headers["x-volley-signature"]).toBe(hmac(legacy, byHook(legacy.id).body));
    const resealed = await stored(legacy.id);
    expect(isSealed(resealed)).toBe(true);
    expect(resealed).not.toContain(legacy.secret.slice("whsec_".length));
    for (const id of [hook.id, legacy.id]) await disableWebhook(h.db.db, DEFAULT_ORG_ID, id);
  });

  it("retry after a 500 and a receiver that does not answer in time, then succeed with the same signed body", async () => {
    const flaky = await receiver([500, "hang"]);
    const hook = await createWebhook(h.db.db, { orgId: DEFAULT_ORG_ID, url: flaky.url, events: ["run.finished"] }, KEYS);
    const runId = await finishedRun("wh-retry");
    const tries = await flaky.waitFor(3);
    const { job, state } = await jobOf(`whd-${runId}-${hook.id}`);
    expect(state).toBe("completed");
    expect(job.attemptsMade).toBe(3);
    const ours = tries.filter((t) => t.headers["x-volley-delivery"] === `whd-${runId}-${hook.id}`);
    expect(ours).toHaveLength(3);
    expect(new Set(ours.map((t) => t.body)).size).toBe(1);
    for (const t of ours) expect(t.headers["x-volley-signature"]).toBe(hmac(hook, t.body));
    await disableWebhook(h.db.db, DEFAULT_ORG_ID, hook.id);
  });

  it("give up after the job's attempts, keeping the receiver's last answer as the reason", async () => {
    const down = await receiver(Array.from({ length: 10 }, () => 503));
    const hook = await createWebhook(h.db.db, { orgId: DEFAULT_ORG_ID, url: down.url, events: ["run.finished"] }, KEYS);
    const runId = await finishedRun("wh-give-up");
    // 6 attempts, 100 ms doubling: 0.1 + 0.2 + 0.4 + 0.8 + 1.6 s of backoff.
    const { job, state } = await jobOf(`whd-${runId}-${hook.id}`, 20_000);
    expect(state).toBe("failed");
    expect(job.failedReason).toBe(`POST ${down.url} answered 503; a receiver must answer 2xx`);
    expect(down.deliveries).toHaveLength(6);
    expect(job.attemptsMade).toBe(6);
    await disableWebhook(h.db.db, DEFAULT_ORG_ID, hook.id);
  });
});
