import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import "@volley/devstack/vitest-context";
import { pino } from "pino";
import { Server } from "socket.io";
import { createAdapter } from "@socket.io/redis-adapter";
import { io as connect, type Socket } from "socket.io-client";
import { LIVE_FEED, type LivePoints, type RunEvent } from "@volley/contracts";
import { createDb, createTestDatabase, insertFrames, insertRun, insertShards, type DbHandle } from "@volley/db";
import { createRedis } from "@volley/queue";
import type { Redis } from "ioredis";
import { redisDbUrl } from "../test-support/hub-harness";
import { testFrame, testPlan } from "../test-support/fixtures";
import { LiveFeed } from "./live-feed";

let testDb: Awaited<ReturnType<typeof createTestDatabase>>;
let h: DbHandle;
let pub: Redis;
let sub: Redis;
let emitterRedis: Redis;
let http: HttpServer;
let server: Server;
let client: Socket;

// A stand-in for web's /live namespace: a Socket.IO server with the Redis adapter that joins a
// subscriber to its run's room. The feed under test has no socket server of its own.
beforeAll(async () => {
  testDb = await createTestDatabase(inject("databaseServerUrl"));
  h = createDb(testDb.url, 2);
  const url = redisDbUrl(inject("redisUrl"), 8);
  [pub, sub, emitterRedis] = [createRedis(url), createRedis(url), createRedis(url)];
  http = createServer();
  server = new Server(http, { adapter: createAdapter(pub, sub) });
  server.of(LIVE_FEED.namespace).on("connection", (s) => s.on(LIVE_FEED.events.subscribe, (m: { runId: string }, ack: () => void) => void Promise.resolve(s.join(LIVE_FEED.room(m.runId))).then(ack)));
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  client = connect(`http://127.0.0.1:${(http.address() as AddressInfo).port}${LIVE_FEED.namespace}`, { transports: ["websocket"] });
});
afterAll(async () => {
  client?.close();
  await new Promise((r) => server?.close(r));
  for (const c of [pub, sub, emitterRedis]) c?.disconnect();
  await h?.close();
  await testDb?.drop();
});

function collect<T>(event: string, until: (all: T[]) => boolean, timeoutMs = 5000): Promise<T[]> {
  const all: T[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`only ${all.length} ${event} events: ${JSON.stringify(all)}`)), timeoutMs);
    const on = (m: T) => {
      all.push(m);
      if (until(all)) {
        clearTimeout(timer);
        client.off(event, on);
        resolve(all);
      }
    };
    client.on(event, on);
  });
}

describe("live feed", () => {
  it("pushes merged points for the seconds new frames touched, and status changes, to the run's room only", async () => {
    const run = await insertRun(h.db, { plan: testPlan() });
    const other = await insertRun(h.db, { plan: testPlan() });
    const [a, b] = await insertShards(h.db, run.id, [testPlan(), testPlan()]);
    const ids = (shardId: string, agentId: string) => ({ runId: run.id, shardId, agentId });
    await client.emitWithAck(LIVE_FEED.events.subscribe, { runId: run.id });
    const feed = new LiveFeed({ db: h.db, redis: emitterRedis, log: pino({ level: "silent" }) });

    const first = collect<LivePoints>(LIVE_FEED.events.points, (all) => all.length >= 1);
    await insertFrames(h.db, [testFrame(ids(a!.id, "agt_a"), 0, [10, 20]), testFrame(ids(a!.id, "agt_a"), 1, [30])]);
    feed.publish({ type: "intervals", runId: run.id, stored: 2, at: Date.now() });
    const [p1] = await first;
    expect(p1!.points.map((p) => [p.index, p.sent])).toEqual([[0, 2], [1, 1]]);

    // Shard b's frame for second 1 lands later: only second 1 is re-sent, merged across both shards.
    const second = collect<LivePoints>(LIVE_FEED.events.points, (all) => all.length >= 1);
    await insertFrames(h.db, [testFrame(ids(b!.id, "agt_b"), 1, [40, 50])]);
    feed.publish({ type: "intervals", runId: run.id, stored: 1, at: Date.now() });
    const [p2] = await second;
    expect(p2!.points).toHaveLength(1);
    expect(p2!.points[0]).toMatchObject({ index: 1, sent: 3, health: { agents: 2 } });
    expect(p2!.points[0]!.max).toBeCloseTo(50, 0);

    // A restarted hub (a new feed, nothing in memory) rebuilds second 1 from every stored frame.
    const restarted = new LiveFeed({ db: h.db, redis: emitterRedis, log: pino({ level: "silent" }) });
    const third = collect<LivePoints>(LIVE_FEED.events.points, (all) => all.length >= 1);
    await insertFrames(h.db, [testFrame(ids(b!.id, "agt_b"), 0, [60])]);
    restarted.publish({ type: "intervals", runId: run.id, stored: 1, at: Date.now() });
    const [p3] = await third;
    expect(p3!.points.map((p) => [p.index, p.sent, p.health.agents])).toEqual([[0, 2 + 1, 2], [1, 3, 2]]);
    await restarted.idle();

    const statuses = collect<RunEvent>(LIVE_FEED.events.status, (all) => all.length >= 1);
    feed.publish({ type: "status", runId: other.id, status: "running", reason: null, at: Date.now() });
    feed.publish({ type: "status", runId: run.id, status: "passed", reason: null, at: Date.now() });
    expect((await statuses).map((e) => [e.runId, e.type === "status" && e.status])).toEqual([[run.id, "passed"]]);
    await feed.idle();
  });
});
