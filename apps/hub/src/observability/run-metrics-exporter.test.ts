import { readFileSync } from "node:fs";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createDb, createTestDatabase, DEFAULT_ORG_ID, getMetricsExport, insertRun, parseSecretKeys, putMetricsExport, type Db } from "@volley/db";
import { IntervalMerger } from "@volley/metrics";
import { RUN_SERIES_NAMES, type IntervalPoint } from "@volley/contracts";
import { testFrame, testPlan } from "../test-support/fixtures";
import { prometheusMissing, startPrometheus, type PrometheusReceiver } from "../test-support/prometheus-receiver";
import { RunMetricsExporter } from "./run-metrics-exporter";

const KEYS = parseSecretKeys(Buffer.alloc(32, 7).toString("base64"));
const log = pino({ level: "silent" });

/** Seconds of a two-agent run, merged the way the live feed merges stored frames. */
function runPoints(runId: string, seconds: number, t0: number): IntervalPoint[] {
  return Array.from({ length: seconds }, (_, i) => {
    const m = new IntervalMerger(i);
    m.add(testFrame({ runId, shardId: "s1", agentId: "a1" }, i, [10 + i, 20, 30], { startedAt: t0 + i * 1000 }));
    m.add(testFrame({ runId, shardId: "s2", agentId: "a2" }, i, [40, 50 + i], { startedAt: t0 + i * 1000 }));
    return m.point();
  });
}

describe.skipIf(prometheusMissing)("run metrics to a real Prometheus remote-write receiver", () => {
  let prom: PrometheusReceiver;
  let handle: { db: Db; close(): Promise<void> };
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const [p, database] = await Promise.all([startPrometheus(), createTestDatabase(inject("databaseServerUrl"))]);
    prom = p;
    drop = database.drop;
    handle = createDb(database.url);
  }, 60_000);
  afterAll(async () => {
    await prom?.stop();
    await handle?.close();
    await drop?.();
  });

  it("pushes every settled second once, then the rest at the end, with the org's labels and auth; values as merged", async () => {
    const { db } = handle;
    await putMetricsExport(
      db,
      DEFAULT_ORG_ID,
      { kind: "prometheus-remote-write", url: prom.writeUrl, authorization: "Bearer not-checked-by-prometheus", labels: { env: "ci" }, enabled: true },
      KEYS,
    );
    const run = await insertRun(db, { plan: testPlan({ name: "export me" }) });
    const exporter = new RunMetricsExporter({ db, log, secretsKeys: KEYS, publicOnly: false, settleSeconds: 2 });
    const t0 = Math.floor(Date.now() / 1000) * 1000 - 30_000;
    const points = runPoints(run.id, 6, t0);
    // Seconds arrive as the live feed pushes them: partial versions first, then the full ones.
    exporter.points(run.id, points.slice(0, 3));
    exporter.points(run.id, points.slice(2, 5));
    await exporter.finished(run.id);
    exporter.points(run.id, [points[5]!]); // after the end: nothing more for this run is pushed
    await exporter.finished(run.id);

    const sent = await prom.query(`volley_run_messages_sent_per_second{run_id="${run.id}"}[5m]`);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.metric).toMatchObject({ run_name: "export me", org: DEFAULT_ORG_ID, env: "ci" });
    expect(sent[0]!.values!.map(([t, v]) => [t * 1000, Number(v)])).toEqual(points.slice(0, 5).map((p) => [p.t, p.sent]));
    expect(points[0]!.sent).toBe(5);
    const p99 = await prom.query(`volley_run_latency_seconds{run_id="${run.id}",quantile="0.99"}[5m]`);
    expect(p99[0]!.values!.map(([, v]) => Number(v))).toEqual(points.slice(0, 5).map((p) => p.p99! / 1000));
    const view = await getMetricsExport(db, DEFAULT_ORG_ID);
    expect(view).toMatchObject({ hasAuthorization: true, lastStatus: 204, lastError: null });
  }, 60_000);

  it("records a receiver that is down on the export and keeps the seconds for the next push", async () => {
    const { db } = handle;
    await putMetricsExport(db, DEFAULT_ORG_ID, { kind: "prometheus-remote-write", url: "http://127.0.0.1:9/api/v1/write", labels: {}, enabled: true }, KEYS);
    const run = await insertRun(db, { plan: testPlan() });
    const outcomes: string[] = [];
    const exporter = new RunMetricsExporter({ db, log, secretsKeys: KEYS, publicOnly: false, configTtlMs: 0, onPush: (o) => outcomes.push(o) });
    const points = runPoints(run.id, 4, Math.floor(Date.now() / 1000) * 1000 - 20_000);
    exporter.points(run.id, points);
    await new Promise((r) => setTimeout(r, 500));
    expect(outcomes).toEqual(["failed"]);
    expect(await getMetricsExport(db, DEFAULT_ORG_ID)).toMatchObject({ lastStatus: 0, lastError: expect.stringContaining("ECONNREFUSED") });
    // The receiver is back (the org fixed the URL): the seconds kept are pushed at the end.
    await putMetricsExport(db, DEFAULT_ORG_ID, { kind: "prometheus-remote-write", url: prom.writeUrl, labels: {}, enabled: true }, KEYS);
    await exporter.finished(run.id);
    expect(outcomes).toEqual(["failed", "ok"]);
    const sent = await prom.query(`volley_run_messages_sent_per_second{run_id="${run.id}"}[5m]`);
    expect(sent[0]!.values).toHaveLength(4);
  }, 60_000);

  it("in hosted mode refuses a loopback endpoint, naming why, and pushes nothing", async () => {
    const { db } = handle;
    await putMetricsExport(db, DEFAULT_ORG_ID, { kind: "prometheus-remote-write", url: prom.writeUrl, labels: {}, enabled: true }, KEYS);
    const run = await insertRun(db, { plan: testPlan() });
    const exporter = new RunMetricsExporter({ db, log, secretsKeys: KEYS, publicOnly: true });
    await exporter.points(run.id, runPoints(run.id, 3, Date.now() - 10_000));
    await exporter.finished(run.id);
    expect(await getMetricsExport(db, DEFAULT_ORG_ID)).toMatchObject({ lastStatus: 0, lastError: expect.stringMatching(/refused: .*loopback/i) });
    expect(await prom.query(`volley_run_messages_sent_per_second{run_id="${run.id}"}[5m]`)).toEqual([]);
  }, 60_000);

  it("infra/grafana/volley-run.json: every panel's query answers with the pushed run's data, and every exported series is drawn", async () => {
    const { db } = handle;
    await putMetricsExport(db, DEFAULT_ORG_ID, { kind: "prometheus-remote-write", url: prom.writeUrl, labels: {}, enabled: true }, KEYS);
    const run = await insertRun(db, { plan: testPlan({ name: "dashboard" }) });
    const exporter = new RunMetricsExporter({ db, log, secretsKeys: KEYS, publicOnly: false, configTtlMs: 0 });
    exporter.points(run.id, runPoints(run.id, 5, Math.floor(Date.now() / 1000) * 1000 - 20_000));
    await exporter.finished(run.id);
    const dashboard = JSON.parse(readFileSync(new URL("../../../../infra/grafana/volley-run.json", import.meta.url), "utf8")) as {
      panels: { title: string; targets: { expr: string }[] }[];
      templating: { list: { name: string; query: unknown }[] };
    };
    const drawn = new Set<string>();
    for (const panel of dashboard.panels) {
      for (const t of panel.targets) {
        for (const m of t.expr.matchAll(/volley_run_[a-z_]+/g)) drawn.add(m[0]);
        const result = await prom.query(t.expr.replaceAll("$run_id", run.id).replaceAll("$__range", "5m"));
        expect(result.length, `${panel.title}: ${t.expr}`).toBeGreaterThan(0);
      }
    }
    expect([...drawn].sort()).toEqual([...RUN_SERIES_NAMES].sort());
    const runVar = dashboard.templating.list.find((v) => v.name === "run_id");
    expect(JSON.stringify(runVar?.query)).toContain("label_values(volley_run_connections, run_id)");
  }, 60_000);
});
