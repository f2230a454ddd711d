import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { Queue } from "bullmq";
import { describe, expect, it } from "vitest";
import { DEFAULT_ORG_ID, finishRun, insertRun, markRunRunning, putMetricsExport } from "@volley/db";
import { testFrame, testPlan } from "../test-support/fixtures";
import { prometheusMissing, startPrometheus } from "../test-support/prometheus-receiver";
import { useHubHarness } from "../test-support/use-hub-harness";
import { HubMetrics } from "./hub-metrics";

const TOKEN = "metrics-token-0123456789";
const h = useHubHarness({ metricsToken: TOKEN });

/** One sample's value from Prometheus' text format, or undefined when the series is absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const m = /^[^{ ]+(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const got = Object.fromEntries([...(m[1] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[2]);
  }
  return undefined;
}

const scrape = async (auth?: string) => fetch(`${h.hubUrl}/metrics`, auth ? { headers: { authorization: auth } } : {});

describe("hub /metrics", () => {
  it("needs the bearer token when HUB_METRICS_TOKEN is set, and says so", async () => {
    const none = await scrape();
    expect(none.status).toBe(401);
    expect(await none.text()).toContain("HUB_METRICS_TOKEN");
    expect((await scrape("Bearer wrong-token-0123456789")).status).toBe(401);
    expect((await scrape(`Bearer ${TOKEN}`)).status).toBe(200);
  });

  it("reports runs by status, connected agents, queue depth and frames stored as they are", async () => {
    const db = h.db.db;
    const before = await (await scrape(`Bearer ${TOKEN}`)).text();
    const connectedBefore = sample(before, "volley_hub_agents_connected")!;
    const runsBefore = (status: string) => sample(before, "volley_hub_runs", { status }) ?? 0;
    const framesBefore = sample(before, "volley_hub_frames_stored_total") ?? 0;

    // Two finished runs straight in the database, one queued without a job.
    for (const status of ["failed", "aborted"] as const) {
      const r = await insertRun(db, { plan: testPlan() });
      await markRunRunning(db, r.id);
      expect(await finishRun(db, r.id, { status, reason: "test" })).toBeTruthy();
    }
    await insertRun(db, { plan: testPlan() });

    // A real run through the hub with one agent and two frames.
    const a = await h.connect({ name: "metrics-agent" });
    const runId = await h.startRun(testPlan({ duration: "1s" }));
    const job = await a.until((r) => r.assign.find((j) => j.runId === runId), 5000, "the shard");
    const start = await a.nextStart();
    for (const seq of [0, 1])
      await a.sendFrame(testFrame({ runId, shardId: job.shardId, agentId: a.agentId }, seq, [4], { startedAt: start.startAt + seq * 1000 }));
    await a.end({ runId, shardId: job.shardId, status: "completed", frames: 2 });
    expect((await h.waitForFinal(runId)).status).toBe("passed");

    const text = await (await scrape(`Bearer ${TOKEN}`)).text();
    expect(sample(text, "volley_hub_runs", { status: "passed" })).toBe(runsBefore("passed") + 1);
    expect(sample(text, "volley_hub_runs", { status: "failed" })).toBe(runsBefore("failed") + 1);
    expect(sample(text, "volley_hub_runs", { status: "aborted" })).toBe(runsBefore("aborted") + 1);
    expect(sample(text, "volley_hub_runs", { status: "queued" })).toBe(runsBefore("queued") + 1);
    expect(sample(text, "volley_hub_agents_connected")).toBe(connectedBefore + 1);
    expect(sample(text, "volley_hub_agents", { status: "online" })).toBeGreaterThanOrEqual(1);
    expect(sample(text, "volley_hub_frames_stored_total")).toBe(framesBefore + 2);
    expect(sample(text, "volley_hub_queue_jobs", { queue: "volley-runs", state: "waiting" })).toBe(0);
    expect(sample(text, "volley_hub_process_cpu_seconds_total")).toBeGreaterThan(0);
    expect(text).toMatch(/hub="hub-/);
  });

  it.skipIf(prometheusMissing)(
    "pushes a run it supervises to the org's remote-write endpoint: every second the meter merged, once",
    async () => {
      const prom = await startPrometheus();
      try {
        await putMetricsExport(h.db.db, DEFAULT_ORG_ID, { kind: "prometheus-remote-write", url: prom.writeUrl, labels: { suite: "hub" }, enabled: true }, null);
        const a = await h.connect({ name: "export-agent", pool: "export" });
        const runId = await h.startRun(testPlan({ name: "exported", duration: "3s", agents: { pool: "export" } }));
        const job = await a.until((r) => r.assign.find((j) => j.runId === runId), 5000, "the shard");
        const start = await a.nextStart();
        for (const seq of [0, 1, 2])
          await a.sendFrame(testFrame({ runId, shardId: job.shardId, agentId: a.agentId }, seq, [4, 5, 6 + seq], { startedAt: start.startAt + seq * 1000 }));
        await a.end({ runId, shardId: job.shardId, status: "completed", frames: 3 });
        expect((await h.waitForFinal(runId)).status).toBe("passed");
        let sent: Awaited<ReturnType<typeof prom.query>> = [];
        for (let i = 0; i < 150 && (sent[0]?.values?.length ?? 0) < 3; i++) {
          await new Promise((r) => setTimeout(r, 100));
          sent = await prom.query(`volley_run_messages_sent_per_second{run_id="${runId}"}[10m]`);
        }
        expect(sent[0]?.metric).toMatchObject({ run_name: "exported", suite: "hub" });
        expect(sent[0]?.values?.map(([, v]) => Number(v))).toEqual([3, 3, 3]);
        const max = await prom.query(`volley_run_latency_seconds{run_id="${runId}",quantile="1"}[10m]`);
        // The merged HdrHistogram's max (3 significant digits): 6.003 ms for a recorded 6 ms.
        const maxes = max[0]?.values?.map(([, v]) => Number(v)) ?? [];
        expect(maxes).toHaveLength(3);
        maxes.forEach((v, i) => {
          expect(v).toBeCloseTo((6 + i) / 1000, 4);
        });
        const text = await (await scrape(`Bearer ${TOKEN}`)).text();
        expect(sample(text, "volley_hub_remote_writes_total", { outcome: "ok" })).toBeGreaterThanOrEqual(1);
      } finally {
        await prom.stop();
      }
    },
    45_000,
  );
});

describe("hub /metrics with a frozen store", () => {
  it("answers within seconds, its Redis gauges left out and volley_hub_source_up saying so", async () => {
    // A Redis that accepts connections and never answers: what a frozen (SIGSTOPped, swapped-out) one looks like.
    const frozen = createServer(() => {});
    await new Promise<void>((resolve) => frozen.listen(0, "127.0.0.1", resolve));
    const queue = new Queue("volley-frozen", {
      connection: { host: "127.0.0.1", port: (frozen.address() as AddressInfo).port, maxRetriesPerRequest: null, enableOfflineQueue: true },
    });
    queue.on("error", () => {});
    const metrics = new HubMetrics({ db: h.db.db, hubId: "hub-frozen", queues: [queue], connectedAgents: () => 0, token: null });
    try {
      for (let scrape = 0; scrape < 2; scrape++) {
        const started = Date.now();
        const text = await metrics.registry.metrics();
        // Bounded by the 2 s per-store wait, not by the store: without it this never answers.
        expect(Date.now() - started).toBeLessThan(10_000);
        expect(sample(text, "volley_hub_source_up", { source: "redis" })).toBe(0);
        expect(sample(text, "volley_hub_source_up", { source: "postgres" })).toBe(1);
        expect(sample(text, "volley_hub_queue_jobs", { queue: "volley-frozen", state: "waiting" })).toBeUndefined();
        expect(sample(text, "volley_hub_agents_connected")).toBe(0);
      }
    } finally {
      // Not awaited: a frozen Redis never answers the goodbye either.
      void queue.disconnect().catch(() => {});
      frozen.close();
    }
  }, 30_000);
});
