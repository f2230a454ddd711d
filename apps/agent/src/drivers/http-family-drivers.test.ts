import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { HTTP_PATHS, startHelloHttp, startHttpTargetServer, type HttpTargetServer } from "@volley/targets";
import type { Driver } from "./driver";
import { closeByUs, closed, collect, connectError, driverTestKit, EVERY_BYTE, freePort, roundTrip } from "./driver-test-kit";
import { httpDriver } from "./http-driver";
import { longPollingDriver, shortPollingDriver } from "./polling-driver";
import { sseDriver } from "./sse-driver";

const kit = driverTestKit();

/** The URL each driver connects to on the HTTP reference target. */
const CASES: [string, Driver, (s: HttpTargetServer) => string][] = [
  ["sse + POST", sseDriver, (s) => `${s.url}${HTTP_PATHS.sse}`],
  ["long polling", longPollingDriver, (s) => `${s.url}/poll`],
  ["short polling", shortPollingDriver, (s) => `${s.url}/poll`],
  ["plain http", httpDriver, (s) => `${s.url}${HTTP_PATHS.echo}`],
];

describe("HTTP-family drivers against the HTTP reference target", () => {
  for (const [name, driver, urlOf] of CASES) {
    it(`${name}: echoes binary as the same Buffer, in order, then closes by us`, async () => {
      const server = await kit.serve(startHttpTargetServer());
      const conn = await kit.connect(driver, { url: urlOf(server), polling: { interval: "20ms", wait: "5s" } });
      const got = await roundTrip(conn, EVERY_BYTE);
      expect(Buffer.isBuffer(got)).toBe(true);
      expect(Buffer.compare(got as Buffer, EVERY_BYTE)).toBe(0);
      const three = collect(conn, 3);
      for (const n of [1, 2, 3]) conn.send(Buffer.alloc(40, n));
      expect((await three).map((b) => (b as Buffer)[0])).toEqual([1, 2, 3]);
      await closeByUs(conn);
    });

    it(`${name}: classifies a refused connection`, async () => {
      const port = await freePort();
      const url = urlOf({ url: `http://127.0.0.1:${port}` } as HttpTargetServer);
      expect(await connectError(driver, { url })).toMatchObject({ errorClass: "refused", detail: "ECONNREFUSED" });
    });
  }

  for (const [name, driver, urlOf] of CASES.slice(0, 3)) {
    it(`${name}: a bad delay is a handshake error with the status; a server close is reported`, async () => {
      const server = await kit.serve(startHttpTargetServer());
      expect(await connectError(driver, { url: `${urlOf(server)}?delay=soon` })).toMatchObject({ errorClass: "handshake", detail: "HTTP 400" });
      const conn = await kit.connect(driver, { url: urlOf(server), polling: { interval: "20ms", wait: "5s" } });
      const info = closed(conn);
      await kit.stop(server);
      expect(await info).toMatchObject({ byServer: true, errorClass: expect.stringMatching(/closed|refused/) });
    });

    it(`${name}: room members get each other's messages, not their own`, async () => {
      const server = await kit.serve(startHttpTargetServer());
      const opts = { url: urlOf(server), room: "r1", polling: { interval: "20ms", wait: "5s" } };
      const [a, b, c] = [await kit.connect(driver, opts), await kit.connect(driver, opts), await kit.connect(driver, opts)];
      const other = await kit.connect(driver, { ...opts, room: "r2" });
      const seen: string[] = [];
      for (const [label, conn] of [
        ["a", a],
        ["b", b],
        ["c", c],
        ["other", other],
      ] as const)
        conn.onMessage((d) => seen.push(`${label}:${(d as Buffer)[0]}`));
      a.send(Buffer.alloc(40, 7));
      await expect.poll(() => seen.length, { timeout: 3000 }).toBe(2);
      await new Promise((r) => setTimeout(r, 100));
      expect(seen.sort()).toEqual(["b:7", "c:7"]);
    });
  }

  it("plain http: a non-2xx status is a per-message protocol error, not a reply", async () => {
    const server = await kit.serve(startHttpTargetServer());
    const conn = await kit.connect(httpDriver, { url: `${server.url}/missing` });
    const error = new Promise((resolve) => conn.onError!((errorClass, detail) => resolve({ errorClass, detail })));
    let replies = 0;
    conn.onMessage(() => replies++);
    conn.send(EVERY_BYTE);
    expect(await error).toEqual({ errorClass: "protocol", detail: "HTTP 404" });
    expect(replies).toBe(0);
  });

  it("plain http: GET without a body and a fixed body both count the 2xx as the reply", async () => {
    const server = await kit.serve(startHttpTargetServer());
    for (const http of [
      { method: "GET" as const, pipelining: 1, keepAlive: true },
      { method: "POST" as const, body: '{"hello":1}', pipelining: 1, keepAlive: true },
    ]) {
      const conn = await kit.connect(httpDriver, { url: `${server.url}${HTTP_PATHS.echo}?delay=5`, http });
      const got = await roundTrip(conn, EVERY_BYTE);
      expect(Buffer.compare(got as Buffer, EVERY_BYTE)).toBe(0);
    }
  });

  it("plain http: keep-alive reuses the connect's socket; keepAlive: false opens one TCP connection per request (the server's count)", async () => {
    for (const keepAlive of [true, false]) {
      const app = await startHelloHttp();
      try {
        const conn = await kit.connect(httpDriver, { url: `${app.url}/hello`, http: { method: "GET", pipelining: 1, keepAlive } });
        for (let i = 0; i < 5; i++) await roundTrip(conn, Buffer.alloc(40, i));
        expect(app.stats().requests).toBe(5);
        expect(app.stats().connections).toBe(keepAlive ? 1 : 5);
        await closeByUs(conn);
      } finally {
        await app.close();
      }
    }
  });

  it("plain http, kept alive: chunked bodies, bodyless statuses and HEAD are each read to their end on one socket", async () => {
    let sockets = 0;
    const server = createServer((req, res) => {
      const kind = new URL(req.url!, "http://x").searchParams.get("kind");
      req.resume();
      req.on("end", () => {
        if (kind === "204") return void res.writeHead(204).end();
        res.writeHead(200, { "content-type": "text/plain" }); // no length: chunked
        res.write("a".repeat(3000));
        setTimeout(() => res.end("b".repeat(70_000)), 2);
      });
    });
    server.on("connection", () => sockets++);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    try {
      for (const [kind, method] of [
        ["chunked", "GET"],
        ["204", "POST"],
        ["chunked", "HEAD"],
      ] as const) {
        sockets = 0;
        const conn = await kit.connect(httpDriver, { url: `${base}?kind=${kind}`, http: { method, pipelining: 1, keepAlive: true } });
        for (let i = 0; i < 4; i++) expect((await roundTrip(conn, Buffer.alloc(40, i))) as Buffer).toEqual(Buffer.alloc(40, i));
        expect(sockets).toBe(1);
        await closeByUs(conn);
      }
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it("plain http, kept alive: a socket the server closed when idle is replaced at the next request, the connection stays", async () => {
    let sockets = 0;
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => res.writeHead(200, { "content-length": 2 }).end("ok"));
    });
    server.keepAliveTimeout = 300; // answers carry Keep-Alive: timeout=0, and idle sockets close after 300 ms
    server.on("connection", () => sockets++);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const conn = await kit.connect(httpDriver, {
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
        http: { method: "GET", pipelining: 1, keepAlive: true },
      });
      let closedInfo: unknown;
      conn.onClose((info) => (closedInfo = info));
      for (let i = 0; i < 3; i++) {
        expect((await roundTrip(conn, Buffer.alloc(40, i))) as Buffer).toEqual(Buffer.alloc(40, i));
        await new Promise((r) => setTimeout(r, 450));
      }
      expect(closedInfo).toBeUndefined();
      expect(sockets).toBe(3);
      await closeByUs(conn);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
