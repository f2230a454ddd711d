import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import type { TestApp } from "./app-http";
import { startJsonRpcWs, type JsonRpcStats } from "./jsonrpc-ws";

const apps: TestApp<JsonRpcStats>[] = [];
const sockets: WebSocket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.terminate();
  for (const a of apps.splice(0)) await a.close();
});

async function open() {
  const app = await startJsonRpcWs();
  apps.push(app);
  const ws = new WebSocket(app.url);
  sockets.push(ws);
  const frames: unknown[] = [];
  const waiters: ((f: unknown) => void)[] = [];
  ws.on("message", (d, isBinary) => {
    expect(isBinary).toBe(false);
    const f: unknown = JSON.parse(String(d));
    const w = waiters.shift();
    if (w) w(f);
    else frames.push(f);
  });
  await new Promise((resolve, reject) => (ws.once("open", resolve), ws.once("error", reject)));
  const next = () => new Promise<unknown>((resolve) => (frames.length > 0 ? resolve(frames.shift()) : waiters.push(resolve)));
  const send = (m: unknown) => ws.send(typeof m === "string" ? m : JSON.stringify(m));
  return { app, ws, next, send, frames };
}

describe("jsonrpc ws", () => {
  it("answers echo, add and time by id", async () => {
    const { app, next, send } = await open();
    send({ jsonrpc: "2.0", id: 1, method: "echo", params: { a: [1, "x"] } });
    expect(await next()).toEqual({ jsonrpc: "2.0", id: 1, result: { a: [1, "x"] } });
    send({ jsonrpc: "2.0", id: "two", method: "add", params: [2, 40] });
    expect(await next()).toEqual({ jsonrpc: "2.0", id: "two", result: 42 });
    const before = Date.now();
    send({ jsonrpc: "2.0", id: 3, method: "time" });
    const t = (await next()) as { result: number };
    expect(t.result).toBeGreaterThanOrEqual(before - 1);
    expect(t.result).toBeLessThanOrEqual(Date.now() + 1);
    expect(app.stats()).toEqual({ requests: 3, notifications: 0, responses: 3, errors: 0, refused: 0, rateLimited: 0 });
  });

  it("answers errors per the spec and never answers a notification", async () => {
    const { app, next, send, frames } = await open();
    send("{not json");
    expect(await next()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
    send({ jsonrpc: "2.0", id: 5, method: "nope" });
    expect(await next()).toMatchObject({ id: 5, error: { code: -32601 } });
    send({ jsonrpc: "2.0", id: 6, method: "toString" });
    expect(await next()).toMatchObject({ id: 6, error: { code: -32601 } });
    send({ jsonrpc: "1.0", id: 7, method: "echo" });
    expect(await next()).toMatchObject({ id: 7, error: { code: -32600 } });
    send({ jsonrpc: "2.0", id: 8, method: "add", params: ["a", 1] });
    expect(await next()).toMatchObject({ id: 8, error: { code: -32602 } });
    send([]);
    expect(await next()).toMatchObject({ id: null, error: { code: -32600 } });
    // Notifications (a good one and a failing one) get nothing; the request after them proves the order.
    send({ jsonrpc: "2.0", method: "echo", params: [1] });
    send({ jsonrpc: "2.0", method: "nope" });
    send({ jsonrpc: "2.0", id: 9, method: "echo", params: ["after"] });
    expect(await next()).toEqual({ jsonrpc: "2.0", id: 9, result: ["after"] });
    expect(frames).toEqual([]);
    expect(app.stats()).toEqual({ requests: 4, notifications: 2, responses: 7, errors: 6, refused: 0, rateLimited: 0 });
  });

  it("answers a batch with an array of the non-notification responses", async () => {
    const { app, next, send } = await open();
    send([{ jsonrpc: "2.0", id: 1, method: "add", params: [1, 2] }, { jsonrpc: "2.0", method: "echo" }, 42, { jsonrpc: "2.0", id: 2, method: "nope" }]);
    expect(await next()).toEqual([
      { jsonrpc: "2.0", id: 1, result: 3 },
      { jsonrpc: "2.0", id: null, error: expect.objectContaining({ code: -32600 }) },
      { jsonrpc: "2.0", id: 2, error: expect.objectContaining({ code: -32601 }) },
    ]);
    send([{ jsonrpc: "2.0", method: "echo" }]);
    send({ jsonrpc: "2.0", id: 3, method: "echo" });
    expect(await next()).toEqual({ jsonrpc: "2.0", id: 3, result: null });
    const served = await (await fetch(`${app.httpUrl}/stats`)).json();
    expect(served).toEqual({ requests: 3, notifications: 2, responses: 4, errors: 2, refused: 0, rateLimited: 0 });
  });

  it("counts a bounded pipeline of requests exactly", async () => {
    const { app, next, send } = await open();
    for (let i = 0; i < 200; i++) send({ jsonrpc: "2.0", id: i, method: "add", params: [i, 1] });
    for (let i = 0; i < 200; i++) expect(await next()).toEqual({ jsonrpc: "2.0", id: i, result: i + 1 });
    expect(app.stats()).toEqual({ requests: 200, notifications: 0, responses: 200, errors: 0, refused: 0, rateLimited: 0 });
  });

  it("refuses upgrades off /rpc", async () => {
    const { app } = await open();
    const status = await new Promise<number>((resolve) => {
      const ws = new WebSocket(app.url.replace("/rpc", "/other"));
      ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      ws.on("error", () => resolve(-1));
    });
    expect(status).toBe(400);
  });
});

describe("jsonrpc ws limits", () => {
  it("refuses connections past maxConnections with HTTP 503 and closes a client calling too fast with 1008", async () => {
    const app = await startJsonRpcWs({ maxConnections: 1, maxCallsPerSecond: 3 });
    apps.push(app);
    const first = new WebSocket(app.url);
    sockets.push(first);
    await new Promise((resolve, reject) => (first.once("open", resolve), first.once("error", reject)));
    const second = new WebSocket(app.url);
    second.on("error", () => undefined); // the refusal ends it as an error too
    const refusal = await new Promise<{ status: number; body: string }>((resolve) => {
      second.on("unexpected-response", (_req, res) => {
        let body = "";
        res.on("data", (c: Buffer) => (body += c.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
    });
    expect(refusal).toEqual({ status: 503, body: JSON.stringify({ error: "too many connections: this server takes 1" }) });

    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      first.once("close", (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    // Ten calls in one go: the fourth within the same second closes the connection.
    for (let i = 0; i < 10; i++) first.send(JSON.stringify({ jsonrpc: "2.0", id: i, method: "time" }));
    expect(await closed).toEqual({ code: 1008, reason: "rate limit: more than 3 calls in a second" });
    const stats = app.stats();
    expect(stats.refused).toBe(1);
    expect(stats.rateLimited).toBe(1);
    // Unless the second turned over mid-burst, exactly three calls were answered.
    expect(stats.requests).toBeGreaterThanOrEqual(3);
    expect(stats.requests).toBeLessThanOrEqual(6);
  });
});
