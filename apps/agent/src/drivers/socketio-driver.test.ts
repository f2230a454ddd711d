import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { socketioOptionsSchema, type SocketioOptions } from "@volley/contracts";
import { startSocketioEchoServer, type EchoServer } from "@volley/targets";
import { ConnectError } from "./connect-error";
import type { Connection } from "./driver";
import { socketioDriver } from "./socketio-driver";

let echo: EchoServer | undefined;
afterEach(async () => {
  await echo?.close();
  echo = undefined;
});

const options = (o: Partial<SocketioOptions> = {}) => socketioOptionsSchema.parse(o);

async function roundTrip(conn: Connection, payload: Buffer): Promise<Buffer | string> {
  const reply = new Promise<Buffer | string>((resolve) => conn.onMessage(resolve));
  conn.send(payload);
  return reply;
}

async function connectError(url: string, socketio = options()): Promise<ConnectError> {
  const err: unknown = await socketioDriver.connect({ url, connectTimeoutMs: 2000, socketio }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  return err as ConnectError;
}

describe("socket.io driver", () => {
  const payload = Buffer.from([0, 1, 2, 250, 255]);

  for (const [name, socketio] of [
    ["event reply, default transports", options()],
    ["ack reply, websocket only", options({ ack: true, transports: ["websocket"] })],
    ["event reply, polling only", options({ transports: ["polling"] })],
    ["ack reply, polling only, another namespace", options({ ack: true, transports: ["polling"], namespace: "/load" })],
  ] as const) {
    it(`echoes binary as a Buffer (${name})`, async () => {
      echo = await startSocketioEchoServer();
      const conn = await socketioDriver.connect({ url: echo.url, connectTimeoutMs: 2000, socketio });
      const got = await roundTrip(conn, payload);
      expect(Buffer.isBuffer(got)).toBe(true);
      expect([...(got as Buffer)]).toEqual([...payload]);
      const closed = new Promise((resolve) => conn.onClose(resolve));
      conn.close();
      expect(await closed).toMatchObject({ byServer: false });
    });
  }

  it("reports a close by the server, without reconnecting", async () => {
    echo = await startSocketioEchoServer();
    const conn = await socketioDriver.connect({ url: echo.url, connectTimeoutMs: 2000 });
    const closed = new Promise((resolve) => conn.onClose(resolve));
    await echo.close();
    echo = undefined;
    expect(await closed).toMatchObject({ byServer: true, errorClass: "closed" });
  });

  it("classifies a refused connection on both transports", async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    for (const transports of [["polling"], ["websocket"]] as const) {
      const err = await connectError(`http://127.0.0.1:${port}`, options({ transports: [...transports] }));
      expect(err.errorClass).toBe("refused");
      expect(err.detail).toBe("ECONNREFUSED");
    }
  });

  it("classifies a wrong path as a handshake with the HTTP status, and a refused middleware as a handshake", async () => {
    echo = await startSocketioEchoServer();
    const wrongPath = await connectError(echo.url, options({ path: "/nope", transports: ["polling"] }));
    expect(wrongPath).toMatchObject({ errorClass: "handshake", detail: "HTTP 404" });
    const badDelay = await connectError(`${echo.url}/?delay=soon`);
    expect(badDelay.errorClass).toBe("handshake");
    expect(badDelay.detail).toContain("invalid delay");
  });
});
