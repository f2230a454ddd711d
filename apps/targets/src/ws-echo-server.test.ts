import { describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { echoTestKit } from "./echo-test-kit";
import type { HoldSummary } from "./hold-stats";
import { startWsEchoServer, WS_PATHS, WS_STATS_PATH } from "./ws-echo-server";

const { start, track } = echoTestKit(startWsEchoServer);

function open(url: string): Promise<WebSocket> {
  const ws = track(new WebSocket(url));
  return new Promise((resolve, reject) => {
    ws.once("open", () => resolve(ws));
    ws.once("error", reject);
  });
}

function nextMessage(ws: WebSocket): Promise<{ data: Buffer; isBinary: boolean; at: number }> {
  return new Promise((resolve) => ws.once("message", (data, isBinary) => resolve({ data: data as Buffer, isBinary, at: performance.now() })));
}

describe("ws echo server", () => {
  it("echoes text as text and binary as binary", async () => {
    const server = await start();
    expect(server.url).toBe(`ws://127.0.0.1:${server.port}/echo`);
    const ws = await open(server.url);

    const text = nextMessage(ws);
    ws.send("hello");
    const t = await text;
    expect(t.isBinary).toBe(false);
    expect(t.data.toString()).toBe("hello");

    const payload = Buffer.from([0, 1, 2, 250, 255]);
    const bin = nextMessage(ws);
    ws.send(payload);
    const b = await bin;
    expect(b.isBinary).toBe(true);
    expect(Buffer.compare(b.data, payload)).toBe(0);
  });

  it("honours the server delay and a per-connection ?delay=", async () => {
    // Far-apart delays and only lower bounds plus one wide upper bound: a busy machine makes
    // replies late, never early, and the per-connection delay must replace the server's.
    const server = await start(300);
    for (const [url, expected] of [
      [server.url, 300],
      [`${server.url}?delay=15`, 15],
    ] as const) {
      const ws = await open(url);
      const reply = nextMessage(ws);
      const sentAt = performance.now();
      ws.send("x");
      const elapsed = (await reply).at - sentAt;
      expect(elapsed).toBeGreaterThanOrEqual(expected - 1);
      if (expected === 15) expect(elapsed).toBeLessThan(250);
    }
  });

  /** Sends `n` messages 7 ms apart (so each hold is timed alone) and waits for every echo. */
  async function echoSpaced(ws: WebSocket, n: number): Promise<void> {
    let got = 0;
    const all = new Promise<void>((resolve) => ws.on("message", () => ++got === n && resolve()));
    for (let i = 0; i < n; i++) {
      ws.send(`m${i}`);
      await new Promise((r) => setTimeout(r, 7));
    }
    await all;
  }

  it("reports the holds it applied on GET /stats, resets them on DELETE, and is never early", async () => {
    const server = await start();
    const stats = `http://127.0.0.1:${server.port}${WS_STATS_PATH}`;
    const ws = await open(`${server.url}?delay=20`);
    await echoSpaced(ws, 10);
    const res = await fetch(stats);
    expect(res.headers.get("content-type")).toBe("application/json");
    const { hold, buckets } = (await res.json()) as { hold: HoldSummary; buckets: [number, number, number][] };
    expect(hold).toEqual(server.holdStats());
    expect(hold.count).toBe(10);
    expect(buckets.reduce((n, [, , c]) => n + c, 0)).toBe(10);
    expect(buckets[0]![0]).toBeLessThanOrEqual(hold.minMs * 1000);
    // The default timer mode: never before the deadline, and no sooner than whole-ms timers allow.
    expect(hold.minMs).toBeGreaterThanOrEqual(20);
    expect(hold.maxMs).toBeGreaterThanOrEqual(hold.p50Ms);

    expect((await fetch(stats, { method: "DELETE" })).status).toBe(204);
    expect(server.holdStats().count).toBe(0);
    expect((await fetch(stats, { method: "POST" })).status).toBe(405);
    // An undelayed echo records a zero hold for every reply.
    const now = await open(server.url);
    await echoSpaced(now, 3);
    expect(server.holdStats()).toMatchObject({ count: 3, maxMs: 0 });
  });

  it("precise holds (ECHO_HOLD=precise) release each reply within a fraction of a ms after its deadline, in order", async () => {
    const server = await start(0, "precise");
    const ws = await open(`${server.url}?delay=25`);
    const got: string[] = [];
    ws.on("message", (d) => got.push(String(d)));
    await echoSpaced(ws, 20);
    expect(got).toEqual(Array.from({ length: 20 }, (_, i) => `m${i}`));
    const hold = server.holdStats();
    expect(hold.count).toBe(20);
    expect(hold.minMs).toBeGreaterThanOrEqual(25);
    // Timer mode's median is ~26 ms (whole-ms re-arms); polling lands within tens of µs, and the
    // bound leaves room for a busy test machine descheduling this process now and then.
    expect(hold.p50Ms).toBeLessThan(25.5);

    // A stall still holds precise replies and releases them in order.
    got.length = 0;
    server.stall(60);
    const sentAt = performance.now();
    ws.send("a");
    ws.send("b");
    await new Promise<void>((resolve) => ws.on("message", () => got.length === 2 && resolve()));
    expect(got).toEqual(["a", "b"]);
    expect(performance.now() - sentAt).toBeGreaterThanOrEqual(59);
  });

  it("holds replies while stalled and releases them in order", async () => {
    const server = await start();
    const ws = await open(server.url);
    const got: string[] = [];
    const done = new Promise<number>((resolve) =>
      ws.on("message", (d) => {
        got.push(String(d));
        if (got.length === 3) resolve(performance.now());
      }),
    );
    const sentAt = performance.now();
    server.stall(150);
    ws.send("a");
    ws.send("b");
    ws.send("c");
    const elapsed = (await done) - sentAt;
    expect(got).toEqual(["a", "b", "c"]);
    expect(elapsed).toBeGreaterThanOrEqual(140);
  });

  it("/ping echoes each ping unchanged and answers a text `ping` with the connection's count", async () => {
    const server = await start();
    const ws = await open(`ws://127.0.0.1:${server.port}${WS_PATHS.ping}`);
    const payload = Buffer.from([9, 8, 7]);
    const bin = nextMessage(ws);
    ws.send(payload);
    expect(Buffer.compare((await bin).data, payload)).toBe(0);
    const pong = nextMessage(ws);
    ws.send("ping");
    const p = await pong;
    expect(p.isBinary).toBe(false);
    expect(JSON.parse(p.data.toString())).toEqual({ count: 2 });
  });

  it("/broadcast puts everyone in one room, sender included; /group reaches the other members only", async () => {
    const server = await start();
    const base = `ws://127.0.0.1:${server.port}`;
    const [a, b] = [await open(`${base}${WS_PATHS.broadcast}`), await open(`${base}${WS_PATHS.broadcast}`)];
    const [toA, toB] = [nextMessage(a), nextMessage(b)];
    a.send("all");
    expect([(await toA).data.toString(), (await toB).data.toString()]).toEqual(["all", "all"]);

    const [g1, g2] = [await open(`${base}${WS_PATHS.group}?room=g`), await open(`${base}${WS_PATHS.group}?room=g`)];
    const atG2 = nextMessage(g2);
    const atG1 = nextMessage(g1);
    g1.send("x");
    expect((await atG2).data.toString()).toBe("x");
    // g2 answers only after x reached it: had g1 got its own x back, x would come before y.
    g2.send("y");
    expect((await atG1).data.toString()).toBe("y");
  });

  it("rejects other paths with 404 and a bad delay, a group without a room or a ping in a room with 400", async () => {
    const server = await start();
    const status = (url: string) =>
      new Promise<number>((resolve) => {
        const ws = track(new WebSocket(url));
        ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
        ws.on("error", () => resolve(-1));
      });
    const base = `ws://127.0.0.1:${server.port}`;
    expect(await status(`${base}/nope`)).toBe(404);
    expect(await status(`${server.url}?delay=soon`)).toBe(400);
    expect(await status(`${base}${WS_PATHS.group}`)).toBe(400);
    expect(await status(`${base}${WS_PATHS.ping}?room=r`)).toBe(400);
  });
});
