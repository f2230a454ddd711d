import { describe, expect, it } from "vitest";
import { stompOptionsSchema, type StompOptions } from "@volley/contracts";
import { startStompEchoServer } from "@volley/targets";
import { closeByUs, closed, collect, connectError, driverTestKit, EVERY_BYTE, freePort, roundTrip } from "./driver-test-kit";
import { stompDriver } from "./stomp-driver";

const kit = driverTestKit();
const options = (o: Partial<StompOptions> = {}) => stompOptionsSchema.parse(o);

describe("stomp driver", () => {
  for (const [name, stomp] of [
    ["receipt on subscribe", options()],
    ["no receipt, fast heart-beats", options({ receipt: false, heartbeat: { outgoing: 100, incoming: 100 } })],
  ] as const) {
    it(`echoes binary through /queue/echo and reply-to (${name})`, async () => {
      const server = await kit.serve(startStompEchoServer());
      const conn = await kit.connect(stompDriver, { url: server.url, stomp });
      const got = await roundTrip(conn, EVERY_BYTE);
      expect(Buffer.isBuffer(got)).toBe(true);
      expect(Buffer.compare(got as Buffer, EVERY_BYTE)).toBe(0);
      // Heart-beats both ways keep a quiet connection open past several intervals.
      await new Promise((r) => setTimeout(r, 400));
      const three = collect(conn, 3);
      for (const n of [1, 2, 3]) conn.send(Buffer.alloc(40, n));
      expect((await three).map((b) => (b as Buffer)[0])).toEqual([1, 2, 3]);
      await closeByUs(conn);
    });
  }

  it("joins a room: a member's message reaches the other members only", async () => {
    const server = await kit.serve(startStompEchoServer());
    const [a, b, c] = await Promise.all([1, 2, 3].map(() => kit.connect(stompDriver, { url: server.url, room: "lobby" })));
    const seen: string[] = [];
    for (const [label, conn] of [
      ["a", a!],
      ["b", b!],
      ["c", c!],
    ] as const)
      conn.onMessage((d) => seen.push(`${label}:${(d as Buffer)[0]}`));
    a!.send(Buffer.alloc(40, 9));
    await expect.poll(() => seen.length, { timeout: 3000 }).toBe(2);
    await new Promise((r) => setTimeout(r, 100));
    expect(seen.sort()).toEqual(["b:9", "c:9"]);
  });

  it("reports a close by the server", async () => {
    const server = await kit.serve(startStompEchoServer());
    const conn = await kit.connect(stompDriver, { url: server.url });
    const info = closed(conn);
    await kit.stop(server);
    expect(await info).toMatchObject({ byServer: true, errorClass: "closed" });
  });

  it("reports an ERROR frame from the broker as a protocol close", async () => {
    const server = await kit.serve(startStompEchoServer());
    // /queue/echo without reply-to is refused by the broker with ERROR.
    const conn = await kit.connect(stompDriver, { url: server.url, stomp: options({ replyTo: "/queue/x" }) });
    const info = closed(conn);
    (conn as unknown as { headers: Record<string, string> }).headers = {};
    conn.send(EVERY_BYTE);
    expect(await info).toMatchObject({ byServer: true, errorClass: "protocol", reason: expect.stringContaining("reply-to") });
  });

  it("classifies refused, wrong path and bad delay", async () => {
    expect(await connectError(stompDriver, { url: `ws://127.0.0.1:${await freePort()}/stomp` })).toMatchObject({
      errorClass: "refused",
      detail: "ECONNREFUSED",
    });
    const server = await kit.serve(startStompEchoServer());
    expect(await connectError(stompDriver, { url: `ws://127.0.0.1:${server.port}/nope` })).toMatchObject({ errorClass: "handshake", detail: "HTTP 404" });
    expect(await connectError(stompDriver, { url: `${server.url}?delay=soon` })).toMatchObject({ errorClass: "handshake", detail: "HTTP 400" });
  });
});
