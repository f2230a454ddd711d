import { describe, expect, it } from "vitest";
import { socketclusterOptionsSchema, type SocketclusterOptions } from "@volley/contracts";
import { startSocketclusterEchoServer } from "@volley/targets";
import { closeByUs, closed, collect, connectError, driverTestKit, EVERY_BYTE, freePort, roundTrip } from "./driver-test-kit";
import { socketclusterDriver } from "./socketcluster-driver";

const kit = driverTestKit();
const options = (o: Partial<SocketclusterOptions> = {}) => socketclusterOptionsSchema.parse(o);

describe("socketcluster driver", () => {
  for (const mode of ["invoke", "transmit", "publish"] as const) {
    it(`echoes binary and text in order (${mode})`, async () => {
      const server = await kit.serve(startSocketclusterEchoServer());
      const conn = await kit.connect(socketclusterDriver, { url: server.url, socketcluster: options({ mode }) });
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

  it("uses socketcluster.path when the URL has none, and honours the URL's ?delay=", async () => {
    const server = await kit.serve(startSocketclusterEchoServer());
    const conn = await kit.connect(socketclusterDriver, { url: `ws://127.0.0.1:${server.port}?delay=40` });
    const sentAt = performance.now();
    await roundTrip(conn, EVERY_BYTE);
    expect(performance.now() - sentAt).toBeGreaterThanOrEqual(39);
  });

  it("invokes the ping procedure: the {count} response answers that very message, which is what is delivered", async () => {
    const server = await kit.serve(startSocketclusterEchoServer());
    const conn = await kit.connect(socketclusterDriver, { url: server.url, socketcluster: options({ event: "ping" }) });
    const two = collect(conn, 2);
    conn.send(EVERY_BYTE);
    conn.send(EVERY_BYTE);
    expect(await two).toEqual([EVERY_BYTE, EVERY_BYTE]);
  });

  it("reports a procedure the server does not answer as lost, not as a reply", async () => {
    const server = await kit.serve(startSocketclusterEchoServer());
    const conn = await kit.connect(socketclusterDriver, { url: server.url, socketcluster: options({ event: "nobody-answers" }) });
    const got: unknown[] = [];
    conn.onMessage((d) => got.push(d));
    conn.send(EVERY_BYTE);
    expect(await roundTrip(await kit.connect(socketclusterDriver, { url: server.url }), EVERY_BYTE)).toBeInstanceOf(Buffer);
    expect(got).toEqual([]);
  });

  it("joins a room: connect resolves subscribed, and a member's message reaches every member", async () => {
    const server = await kit.serve(startSocketclusterEchoServer());
    const members = await Promise.all([1, 2, 3].map(() => kit.connect(socketclusterDriver, { url: server.url, room: "lobby" })));
    const outsider = await kit.connect(socketclusterDriver, { url: server.url, room: "other" });
    const seen: string[] = [];
    members.forEach((conn, i) => {
      conn.onMessage((d) => seen.push(`${i}:${(d as Buffer)[0]}`));
    });
    outsider.onMessage(() => seen.push("outsider"));
    // Sent at once after connect: the subscription is already confirmed.
    members[0]!.send(Buffer.alloc(40, 9));
    await expect.poll(() => seen.length, { timeout: 3000 }).toBe(3);
    await new Promise((r) => setTimeout(r, 100));
    expect(seen.sort()).toEqual(["0:9", "1:9", "2:9"]);
  });

  it("reports a close by the server, without reconnecting", async () => {
    const server = await kit.serve(startSocketclusterEchoServer());
    const conn = await kit.connect(socketclusterDriver, { url: server.url });
    const info = closed(conn);
    await kit.stop(server);
    expect(await info).toMatchObject({ byServer: true, errorClass: "closed" });
    conn.send(EVERY_BYTE); // dropped: no reconnect to a server that is gone
  });

  it("classifies refused, wrong path and bad delay", async () => {
    expect(await connectError(socketclusterDriver, { url: `ws://127.0.0.1:${await freePort()}/socketcluster/` })).toMatchObject({
      errorClass: "refused",
      detail: "ECONNREFUSED",
    });
    const server = await kit.serve(startSocketclusterEchoServer());
    expect(await connectError(socketclusterDriver, { url: `ws://127.0.0.1:${server.port}/nope/` })).toMatchObject({
      errorClass: "handshake",
      detail: "HTTP 404",
    });
    expect(await connectError(socketclusterDriver, { url: `${server.url}?delay=soon` })).toMatchObject({ errorClass: "handshake", detail: "HTTP 400" });
  });
});
