import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { startWsEchoServer, type WsEchoServer } from "@volley/targets";
import { ConnectError } from "./connect-error";
import { wsDriver } from "./ws-driver";

let echo: WsEchoServer | undefined;
let silent: Server | undefined;
afterEach(async () => {
  await echo?.close();
  silent?.closeAllConnections();
  silent?.close();
  echo = silent = undefined;
});

async function connectError(url: string, connectTimeoutMs = 2000): Promise<ConnectError> {
  const err: unknown = await wsDriver.connect({ url, connectTimeoutMs }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  return err as ConnectError;
}

describe("ws driver", () => {
  it("connects and echoes binary and text", async () => {
    echo = await startWsEchoServer();
    const conn = await wsDriver.connect({ url: echo.url, connectTimeoutMs: 2000 });
    const got: (Buffer | string)[] = [];
    const two = new Promise<void>((resolve) =>
      conn.onMessage((d) => {
        got.push(d);
        if (got.length === 2) resolve();
      }),
    );
    conn.send(Buffer.from([1, 2, 3]));
    conn.send("hi");
    await two;
    expect(Buffer.isBuffer(got[0])).toBe(true);
    expect([...(got[0] as Buffer)]).toEqual([1, 2, 3]);
    expect(got[1]).toBe("hi");

    const closed = new Promise((resolve) => conn.onClose(resolve));
    conn.close();
    expect(await closed).toMatchObject({ byServer: false });
  });

  it("ws.frames text: bytes go out as base64 text frames and come back as the same bytes", async () => {
    // A text-only server: it records each frame's kind and answers with the text it got.
    const wss = new WebSocketServer({ port: 0, host: "127.0.0.1" });
    const kinds: boolean[] = [];
    wss.on("connection", (ws) => ws.on("message", (data, isBinary) => (kinds.push(isBinary), ws.send(data.toString()))));
    await new Promise((r) => wss.once("listening", r));
    try {
      const url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`;
      const conn = await wsDriver.connect({ url, connectTimeoutMs: 2000, ws: { frames: "text", perMessageDeflate: false } });
      const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
      const got = await new Promise<Buffer | string>((resolve) => {
        conn.onMessage(resolve);
        conn.send(bytes);
      });
      expect(kinds).toEqual([false]);
      expect(Buffer.isBuffer(got)).toBe(true);
      expect(Buffer.compare(got as Buffer, bytes)).toBe(0);
      conn.close();
    } finally {
      for (const c of wss.clients) c.terminate();
      await new Promise((r) => wss.close(r));
    }
  });

  it("reports a close by the server", async () => {
    echo = await startWsEchoServer();
    const conn = await wsDriver.connect({ url: echo.url, connectTimeoutMs: 2000 });
    const closed = new Promise((resolve) => conn.onClose(resolve));
    await echo.close();
    echo = undefined;
    expect(await closed).toMatchObject({ byServer: true });
  });

  it("classifies a refused connection", async () => {
    // Bind then release a port so nothing listens on it.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const err = await connectError(`ws://127.0.0.1:${port}/echo`);
    expect(err.errorClass).toBe("refused");
    expect(err.detail).toBe("ECONNREFUSED");
  });

  it("classifies an HTTP status at upgrade as handshake, with the status", async () => {
    echo = await startWsEchoServer();
    const err = await connectError(`ws://127.0.0.1:${echo.port}/missing`);
    expect(err.errorClass).toBe("handshake");
    expect(err.detail).toBe("HTTP 404");
  });

  it("classifies a server that never answers the upgrade as timeout", async () => {
    silent = createServer();
    silent.on("upgrade", () => {}); // accept the TCP connection, say nothing
    await new Promise<void>((r) => silent!.listen(0, "127.0.0.1", r));
    const port = (silent.address() as AddressInfo).port;
    const started = performance.now();
    const err = await connectError(`ws://127.0.0.1:${port}/echo`, 150);
    expect(err.errorClass).toBe("timeout");
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
