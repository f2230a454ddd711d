import { createServer, connect, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import "@volley/devstack/vitest-context";
import { Queue } from "bullmq";
import { pino } from "pino";
import type { Redis } from "ioredis";
import { createDb, createTestDatabase, getRunOfAnyOrg, insertRun, type DbHandle } from "@volley/db";
import { createRedis, enqueue, QUEUE_NAMES, runJob } from "@volley/queue";
import { startHub, type RunningHub } from "../hub";
import { TEST_AGENT_TOKEN } from "../test-support/hub-harness";
import { leaseRedisDb, type RedisDbLease } from "../test-support/redis-db-lease";
import { testPlan } from "../test-support/fixtures";

// A hub that loses PostgreSQL while a run waits for agents ends the run errored. The run's reason
// is what users read (run page, API, webhooks): it says the database was lost, in words, not the
// driver's "Failed query: select … params: …"; the driver's error is in the hub's log. The hub
// reaches the real PostgreSQL through a TCP relay the test cuts (every connection dropped, new
// ones refused) and later restores.

class Relay {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private cut = false;
  constructor(upstream: { host: string; port: number }) {
    this.server = createServer((client) => {
      if (this.cut) return void client.destroy();
      const server = connect(upstream.port, upstream.host);
      for (const s of [client, server]) {
        this.sockets.add(s);
        s.on("close", () => this.sockets.delete(s));
        s.on("error", () => {});
      }
      client.pipe(server).pipe(client);
    });
  }
  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return (this.server.address() as AddressInfo).port;
  }
  drop(): void {
    this.cut = true;
    for (const s of this.sockets) s.destroy();
  }
  restore(): void {
    this.cut = false;
  }
  close(): Promise<void> {
    this.drop();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

let testDb: Awaited<ReturnType<typeof createTestDatabase>>;
let relay: Relay;
let hub: RunningHub;
let db: DbHandle;
let lease: RedisDbLease;
let redis: Redis;
let runs: Queue;
const logLines: string[] = [];

beforeAll(async () => {
  testDb = await createTestDatabase(inject("databaseServerUrl"));
  const direct = new URL(testDb.url);
  relay = new Relay({ host: direct.hostname, port: Number(direct.port || 5432) });
  const relayed = new URL(testDb.url);
  relayed.hostname = "127.0.0.1";
  relayed.port = String(await relay.listen());
  lease = await leaseRedisDb(inject("redisUrl"));
  const redisUrl = lease.url;
  redis = createRedis(redisUrl);
  const log = pino(
    { level: "info" },
    new Writable({
      write(chunk, _enc, done) {
        logLines.push(String(chunk));
        done();
      },
    }),
  );
  hub = await startHub({ databaseUrl: relayed.toString(), redisUrl, agentToken: TEST_AGENT_TOKEN, port: 0, log, shutdownGraceMs: 1000 });
  db = createDb(testDb.url, 2);
  runs = new Queue(QUEUE_NAMES.runs, { connection: redis });
});

afterAll(async () => {
  relay?.restore();
  await hub?.close();
  await runs?.close();
  redis?.disconnect();
  await db?.close();
  await relay?.close();
  await testDb?.drop();
  await lease?.release();
});

async function until<T>(what: string, check: () => Promise<T | undefined | null | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("a run whose hub loses the database", () => {
  it("ends errored with a reason in words, the driver's error in the hub's log", async () => {
    // No agent ever connects: the run waits in its pool's line, reading its row every second.
    const run = await insertRun(db.db, { plan: testPlan({ name: "db lost" }) });
    await enqueue(runs, runJob, { runId: run.id });
    await until("the run waiting in the line", async () => logLines.some((l) => l.includes(run.id) && l.includes("run waiting for agents")));

    relay.drop();
    await until("the run's execution failed", async () => logLines.some((l) => l.includes(run.id) && l.includes("run execution failed")));
    // The hub retries the errored status every 2 s until the database answers again.
    relay.restore();
    const ended = await until("the run errored", async () => {
      const row = await getRunOfAnyOrg(db.db, run.id);
      return row?.status === "errored" ? row : null;
    });

    expect(ended.reason).toMatch(/^the hub lost its connection to the database \(PostgreSQL\) while running this run/);
    expect(ended.reason).not.toMatch(/Failed query|select|params|ECONNREFUSED|terminated|127\.0\.0\.1/i);
    const failed = logLines.find((l) => l.includes(run.id) && l.includes("run execution failed"))!;
    const logged = JSON.parse(failed) as { err: string; reason: string };
    // The log keeps what the driver said, beneath drizzle's query text.
    expect(logged.err).toMatch(/Failed query: .*caused by: .*(Connection terminated|ECONNREFUSED|ECONNRESET|not queryable)/s);
    expect(logged.reason).toBe(ended.reason);
  });
});
