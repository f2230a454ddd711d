import { describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import type { EchoServer } from "./echo-server";
import { echoTestKit } from "./echo-test-kit";
import { startSocketclusterEchoServer } from "./socketcluster-echo-server";

/**
 * Speaks the SocketCluster protocol (v2) by hand, so the target is tested without the client the
 * agent uses: JSON packets, `cid` on a request, `rid` on its response, `#handshake` first, `""`
 * as the server's ping (answered with `""`), `#subscribe` and `#publish` for channels.
 */
const { start, track } = echoTestKit(startSocketclusterEchoServer);

async function open(server: EchoServer, query = "") {
  const ws = track(new WebSocket(`${server.url}${query}`));
  const packets: unknown[] = [];
  const waiters: ((p: unknown) => void)[] = [];
  ws.on("message", (d) => {
    const text = String(d);
    if (text === "") return ws.send("");
    const p: unknown = JSON.parse(text);
    const w = waiters.shift();
    if (w) w(p);
    else packets.push(p);
  });
  const next = () => new Promise<unknown>((resolve) => (packets.length > 0 ? resolve(packets.shift()) : waiters.push(resolve)));
  const send = (p: object) => ws.send(JSON.stringify(p));
  await new Promise((resolve, reject) => (ws.once("open", resolve), ws.once("error", reject)));
  send({ event: "#handshake", data: { authToken: null }, cid: 1 });
  expect(await next()).toMatchObject({ rid: 1, data: { id: expect.any(String), isAuthenticated: false } });
  return { ws, next, send };
}

function upgradeStatus(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.on("unexpected-response", (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.on("open", () => reject(new Error("upgrade accepted")));
    ws.on("error", () => {});
  });
}

describe("socketcluster echo server", () => {
  it("answers invoke echo with the payload, transmit echo with a transmit, and ping with the connection's count", async () => {
    const server = await start();
    expect(server.url).toBe(`ws://127.0.0.1:${server.port}/socketcluster/`);
    const a = await open(server);
    a.send({ event: "echo", data: { base64: true, data: "AAH/" }, cid: 2 });
    expect(await a.next()).toEqual({ rid: 2, data: { base64: true, data: "AAH/" } });
    a.send({ event: "echo", data: "hi" });
    expect(await a.next()).toEqual({ event: "echo", data: "hi" });
    for (const cid of [3, 4]) a.send({ event: "ping", cid });
    expect([await a.next(), await a.next()]).toEqual([
      { rid: 3, data: { count: 1 } },
      { rid: 4, data: { count: 2 } },
    ]);
    // The count is per connection.
    const b = await open(server);
    b.send({ event: "ping", cid: 9 });
    expect(await b.next()).toEqual({ rid: 9, data: { count: 1 } });
    expect(server.connections()).toBe(2);
  });

  it("publishes to every subscriber of a channel, the publisher included", async () => {
    const server = await start(300);
    const [a, b] = [await open(server), await open(server)];
    for (const c of [a, b]) {
      c.send({ event: "#subscribe", data: { channel: "room-1" }, cid: 5 });
      expect(await c.next()).toMatchObject({ rid: 5 });
    }
    const sentAt = performance.now();
    a.send({ event: "#publish", data: { channel: "room-1", data: "m" } });
    for (const c of [a, b]) expect(await c.next()).toEqual({ event: "#publish", data: { channel: "room-1", data: "m" } });
    expect(performance.now() - sentAt).toBeLessThan(250); // never held by the server's 300 ms
  });

  it("holds each reply for the connection's ?delay= and keeps them in order", async () => {
    const server = await start(300);
    const { next, send } = await open(server, "?delay=15");
    const sentAt = performance.now();
    for (const n of [1, 2, 3]) send({ event: "echo", data: n, cid: 10 + n });
    const got = [await next(), await next(), await next()];
    const elapsed = performance.now() - sentAt;
    expect(got).toEqual([11, 12, 13].map((rid) => ({ rid, data: rid - 10 })));
    expect(elapsed).toBeGreaterThanOrEqual(14);
    expect(elapsed).toBeLessThan(250); // the server's own 300 ms was replaced
  });

  it("refuses a wrong path with 404 and a malformed delay with 400", async () => {
    const server = await start();
    expect(await upgradeStatus(`ws://127.0.0.1:${server.port}/nope`)).toBe(404);
    expect(await upgradeStatus(`${server.url}?delay=soon`)).toBe(400);
  });
});
