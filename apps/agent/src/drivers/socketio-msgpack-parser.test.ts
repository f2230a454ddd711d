import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Server as IoServer } from "socket.io";
import msgpackParser from "socket.io-msgpack-parser";
import { describe, expect, it } from "vitest";
import { socketioOptionsSchema, type SocketioOptions } from "@volley/contracts";
import { startSocketioEchoServer, startSocketioMsgpackGame } from "@volley/targets";
import { connectError, driverTestKit, EVERY_BYTE, roundTrip } from "./driver-test-kit";
import { socketioDriver } from "./socketio-driver";

const kit = driverTestKit();
const msgpack = (o: Partial<SocketioOptions> = {}) => socketioOptionsSchema.parse({ parser: "msgpack", ...o });

describe("socket.io driver with socket.io-msgpack-parser", () => {
  for (const [name, socketio] of [
    ["event reply, websocket", msgpack({ transports: ["websocket"] })],
    ["ack reply, polling then websocket", msgpack({ ack: true })],
    ["event reply, polling only", msgpack({ transports: ["polling"] })],
  ] as const) {
    it(`round-trips every byte value through a msgpack server's own echo event (${name})`, async () => {
      const app = await kit.serve(startSocketioMsgpackGame());
      const conn = await kit.connect(socketioDriver, { url: app.url, socketio });
      for (let i = 0; i < 3; i++) expect(Buffer.from(await roundTrip(conn, EVERY_BYTE))).toEqual(EVERY_BYTE);
      expect(app.stats()).toMatchObject({ connections: 1, echoes: 3 });
    });
  }

  for (const transports of [["websocket"], ["polling"]] as const)
    it(`a server on the default parser while the plan says msgpack: a failed connect naming the parser and the fix, never a hang (${transports[0]})`, async () => {
      const server = await kit.serve(startSocketioEchoServer());
      const started = Date.now();
      const err = await connectError(socketioDriver, { url: server.url, connectTimeoutMs: 3000, socketio: msgpack({ transports: [...transports] }) });
      expect(Date.now() - started).toBeLessThan(4000);
      // The server's own parser cannot read the CONNECT packet and closes the transport.
      expect(err.errorClass).toBe("closed");
      expect(err.detail).toMatch(
        /after the Engine\.IO handshake, with socketio\.parser: msgpack: .*; remove parser unless the server was created with socket\.io-msgpack-parser$/,
      );
    });

  it("a msgpack server while the plan keeps the default parser: the failed connect says to set socketio.parser: msgpack", async () => {
    const app = await kit.serve(startSocketioMsgpackGame());
    const err = await connectError(socketioDriver, {
      url: app.url,
      connectTimeoutMs: 3000,
      socketio: socketioOptionsSchema.parse({ transports: ["websocket"] }),
    });
    expect(err.detail).toMatch(
      /after the Engine\.IO handshake, with Socket\.IO's default parser: a server created with socket\.io-msgpack-parser needs socketio\.parser: msgpack$/,
    );
    expect(app.stats().connections).toBe(0);
  });

  it("a Socket.IO connect never answered over an open Engine.IO connection times out naming the parser used", async () => {
    // A msgpack server whose middleware never lets a connect through: Engine.IO opens, the connect hangs.
    const http = createServer();
    const io = new IoServer(http, { parser: msgpackParser, serveClient: false });
    io.use(() => undefined);
    await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
    kit.serve({ close: () => new Promise<void>((r) => void io.close(() => r())) });
    const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    const err = await connectError(socketioDriver, { url, connectTimeoutMs: 800, socketio: msgpack({ transports: ["websocket"] }) });
    expect(err.errorClass).toBe("timeout");
    expect(err.detail).toMatch(/^no Socket\.IO connect in 800 ms after the Engine\.IO handshake, with socketio\.parser: msgpack: /);
  });

  it("a server that never answers the Engine.IO handshake gets the plain timeout, without a parser guess", async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    kit.serve({ close: () => new Promise<void>((r) => (silent.closeAllConnections(), silent.close(() => r()))) });
    const port = (silent.address() as AddressInfo).port;
    const err = await connectError(socketioDriver, { url: `http://127.0.0.1:${port}`, connectTimeoutMs: 800, socketio: msgpack({ transports: ["polling"] }) });
    expect(err.errorClass).toBe("timeout");
    expect(err.detail).not.toContain("parser");
  });
});
