import { describe, expect, it } from "vitest";
import { socketioOptionsSchema, type SocketioOptions } from "@volley/contracts";
import { startSocketioEchoServer, startSocketioV2EchoServer, startSocketioV3EchoServer, type EchoServer, type EchoServerOptions } from "@volley/targets";
import { closeByUs, closed, collect, connectError, driverTestKit, EVERY_BYTE, freePort, roundTrip } from "./driver-test-kit";
import { socketioDriver } from "./socketio-driver";

const kit = driverTestKit();

const SERVERS: [SocketioOptions["version"], (o?: EchoServerOptions) => Promise<EchoServer>][] = [
  [2, startSocketioV2EchoServer],
  [3, startSocketioV3EchoServer],
  [4, startSocketioEchoServer],
];

/**
 * One driver against a Socket.IO server of each major: v2 speaks Engine.IO 3 (socket.io-client 2),
 * v3 and v4 Engine.IO 4 (socket.io-client 4). A client of the wrong generation cannot connect at
 * all, so each echo below also shows the version picked the right client. v2 runs first on
 * purpose: a v2 server once rewrote shared options and made later v3/v4 servers answer like v2.
 */
describe.each(SERVERS)("socket.io driver against a v%i server", (version, startServer) => {
  for (const transport of ["websocket", "polling"] as const) {
    for (const ack of [false, true]) {
      it(`echoes binary and text in order (${ack ? "ack" : "event"} reply, ${transport})`, async () => {
        const server = await kit.serve(startServer());
        const socketio = socketioOptionsSchema.parse({ version, ack, transports: [transport] });
        const conn = await kit.connect(socketioDriver, { url: server.url, socketio });
        const got = await roundTrip(conn, EVERY_BYTE);
        expect(Buffer.isBuffer(got)).toBe(true);
        expect(Buffer.compare(got as Buffer, EVERY_BYTE)).toBe(0);
        expect(await roundTrip(conn, "text stays text")).toBe("text stays text");
        const three = collect(conn, 3);
        for (const n of [1, 2, 3]) conn.send(Buffer.alloc(40, n));
        expect((await three).map((b) => (b as Buffer)[0])).toEqual([1, 2, 3]);
        await closeByUs(conn);
      });
    }
  }

  it("connects with the default transports to another namespace, and honours ?delay=", async () => {
    const server = await kit.serve(startServer());
    const socketio = socketioOptionsSchema.parse({ version, namespace: "/load" });
    const conn = await kit.connect(socketioDriver, { url: `${server.url}/?delay=40`, socketio });
    const sentAt = performance.now();
    await roundTrip(conn, EVERY_BYTE);
    expect(performance.now() - sentAt).toBeGreaterThanOrEqual(39);
  });

  it("reports a close by the server, and classifies refused, wrong path and a refused namespace", async () => {
    const server = await kit.serve(startServer());
    const conn = await kit.connect(socketioDriver, { url: server.url, socketio: socketioOptionsSchema.parse({ version }) });
    const info = closed(conn);
    await kit.stop(server);
    expect(await info).toMatchObject({ byServer: true, errorClass: "closed" });

    const refused = await connectError(socketioDriver, {
      url: `http://127.0.0.1:${await freePort()}`,
      socketio: socketioOptionsSchema.parse({ version, transports: ["websocket"] }),
    });
    expect(refused).toMatchObject({ errorClass: "refused", detail: "ECONNREFUSED" });

    const again = await kit.serve(startServer());
    const wrongPath = await connectError(socketioDriver, {
      url: again.url,
      socketio: socketioOptionsSchema.parse({ version, path: "/nope", transports: ["polling"] }),
    });
    expect(wrongPath).toMatchObject({ errorClass: "handshake", detail: "HTTP 404" });
    const badDelay = await connectError(socketioDriver, { url: `${again.url}/?delay=soon`, socketio: socketioOptionsSchema.parse({ version }) });
    expect(badDelay.errorClass).toBe("handshake");
    expect(badDelay.detail).toContain("invalid delay");
  });
});
