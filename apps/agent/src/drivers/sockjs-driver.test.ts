import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { sockjsOptionsSchema, type SockjsOptions } from "@volley/contracts";
import { startSockjsEchoServer, startStompSockjsChat, type EchoServer } from "@volley/targets";
import { ConnectError } from "./connect-error";
import { sockjsDriver } from "./sockjs-driver";

let echo: EchoServer | undefined;
afterEach(async () => {
  await echo?.close();
  echo = undefined;
});

async function connectError(url: string): Promise<ConnectError> {
  const err: unknown = await sockjsDriver.connect({ url, connectTimeoutMs: 2000 }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  return err as ConnectError;
}

describe("sockjs driver", () => {
  // Every byte value, so the base64 carriage is shown to be lossless.
  const payload = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

  for (const transports of [["websocket"], ["xhr-streaming"], ["xhr-polling"], ["eventsource"]] as SockjsOptions["transports"][]) {
    it(`echoes binary back as the same Buffer over ${transports[0]}`, async () => {
      echo = await startSockjsEchoServer();
      const conn = await sockjsDriver.connect({ url: echo.url, connectTimeoutMs: 2000, sockjs: { transports } });
      const reply = new Promise<Buffer | string>((resolve) => conn.onMessage(resolve));
      conn.send(payload);
      const got = await reply;
      expect(Buffer.isBuffer(got)).toBe(true);
      expect(Buffer.compare(got as Buffer, payload)).toBe(0);
      const closed = new Promise((resolve) => conn.onClose(resolve));
      conn.close();
      expect(await closed).toMatchObject({ byServer: false });
    });
  }

  it("reports a close by the server", async () => {
    echo = await startSockjsEchoServer();
    const conn = await sockjsDriver.connect({ url: echo.url, connectTimeoutMs: 2000, sockjs: { transports: ["websocket"] } });
    const closed = new Promise((resolve) => conn.onClose(resolve));
    await echo.close();
    echo = undefined;
    expect(await closed).toMatchObject({ byServer: true, errorClass: "closed" });
  });

  it("classifies a refused connection", async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    expect(await connectError(`http://127.0.0.1:${port}/echo`)).toMatchObject({ errorClass: "refused", detail: "ECONNREFUSED" });
  });

  it("classifies a wrong prefix and a bad delay as a handshake with the HTTP status", async () => {
    echo = await startSockjsEchoServer();
    expect(await connectError(`http://127.0.0.1:${echo.port}/nope`)).toMatchObject({ errorClass: "handshake", detail: "HTTP 404" });
    expect(await connectError(`${echo.url}?delay=soon`)).toMatchObject({ errorClass: "handshake", detail: "HTTP 400" });
  });

  it("sends target.headers on every request of the session: an endpoint behind a log-in opens with its cookie, 401 without", async () => {
    const app = await startStompSockjsChat({ sessionCookie: "SESSION=s3cr3t" });
    try {
      expect(await connectError(app.url)).toMatchObject({ errorClass: "handshake", detail: "HTTP 401" });
      for (const transport of ["websocket", "xhr-streaming", "xhr-polling"] as const) {
        const sockjs = sockjsOptionsSchema.parse({ transports: [transport], encoding: "text" });
        const conn = await sockjsDriver.connect({ url: app.url, headers: { cookie: "SESSION=s3cr3t" }, sockjs, connectTimeoutMs: 3000 });
        // A STOMP CONNECT through the session: the xhr send carries the cookie too, or no CONNECTED comes back.
        const reply = new Promise<Buffer | string>((resolve) => conn.onMessage(resolve));
        conn.send("CONNECT\naccept-version:1.2\nheart-beat:0,0\n\n\0");
        expect(String(await reply)).toMatch(/^CONNECTED\n/);
        conn.close();
      }
      // Only the cookie-less attempt's two /info requests (sockjs-client's, then the driver's own diagnosis).
      expect(app.stats().unauthorized).toBe(2);
    } finally {
      await app.close();
    }
  });
});
