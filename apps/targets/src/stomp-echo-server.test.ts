import { describe, expect, it } from "vitest";
import { WebSocket, type RawData } from "ws";
import { echoTestKit } from "./echo-test-kit";
import { startStompEchoServer } from "./stomp-echo-server";
import { serializeFrame, StompParser, type StompFrame } from "./stomp-frame";

const kit = echoTestKit(startStompEchoServer);

/** A raw STOMP client over ws: frames in, frames out, nothing from the client library under test. */
async function rawClient(url: string) {
  const ws = kit.track(new WebSocket(url, ["v12.stomp"]));
  const parser = new StompParser();
  const frames: StompFrame[] = [];
  let beats = 0;
  ws.on("message", (d: RawData) => {
    const buf = d as Buffer;
    if (buf.toString() === "\n") beats++;
    frames.push(...parser.push(buf));
  });
  await new Promise((r) => ws.once("open", r));
  return {
    ws,
    frames,
    beats: () => beats,
    send: (command: string, headers: Record<string, string>, body?: Buffer) => ws.send(serializeFrame(command, headers, body), { binary: body !== undefined }),
    next: async (command: string) => {
      await expect.poll(() => frames.find((f) => f.command === command), { timeout: 3000 }).toBeDefined();
      return frames.splice(
        frames.findIndex((f) => f.command === command),
        1,
      )[0]!;
    },
  };
}

describe("stomp frames", () => {
  it("round-trips escaped headers and a body with NULs, split across chunks, heart-beats skipped", () => {
    const wire = Buffer.concat([Buffer.from("\n\r\n"), serializeFrame("SEND", { destination: "/a:b\\c\nd" }, Buffer.from([0, 1, 0, 2]))]);
    const parser = new StompParser();
    expect(parser.push(wire.subarray(0, 10))).toEqual([]);
    const [frame] = parser.push(wire.subarray(10));
    expect(frame).toEqual({ command: "SEND", headers: { destination: "/a:b\\c\nd", "content-length": "4" }, body: Buffer.from([0, 1, 0, 2]) });
    expect(() => new StompParser().push(Buffer.from("send\n\n\0"))).toThrow(/not a STOMP command/);
  });
});

describe("stomp echo broker", () => {
  it("CONNECTED, RECEIPT on SUBSCRIBE, echo to reply-to after the exact hold", async () => {
    const server = await kit.start();
    const c = await rawClient(`${server.url}?delay=30`);
    c.send("CONNECT", { "accept-version": "1.2", host: "x", "heart-beat": "0,0" });
    expect((await c.next("CONNECTED")).headers.version).toBe("1.2");
    c.send("SUBSCRIBE", { destination: "/queue/me", id: "0", receipt: "r1" });
    expect((await c.next("RECEIPT")).headers["receipt-id"]).toBe("r1");
    const body = Buffer.from([0, 255, 0, 7]);
    const sentAt = performance.now();
    c.send("SEND", { destination: "/queue/echo", "reply-to": "/queue/me" }, body);
    const msg = await c.next("MESSAGE");
    expect(performance.now() - sentAt).toBeGreaterThanOrEqual(29);
    expect(msg.headers).toMatchObject({ destination: "/queue/me", subscription: "0" });
    expect(msg.body).toEqual(body);
  });

  it("delivers /topic/<room> to every other subscriber, not the sender", async () => {
    const server = await kit.start();
    const clients = await Promise.all([1, 2, 3].map(() => rawClient(server.url)));
    for (const [i, c] of clients.entries()) {
      c.send("CONNECT", { "accept-version": "1.2", host: "x" });
      await c.next("CONNECTED");
      c.send("SUBSCRIBE", { destination: "/topic/r", id: `s${i}`, receipt: "ok" });
      await c.next("RECEIPT");
    }
    clients[0]!.send("SEND", { destination: "/topic/r" }, Buffer.from("hi"));
    expect((await clients[1]!.next("MESSAGE")).body.toString()).toBe("hi");
    expect((await clients[2]!.next("MESSAGE")).body.toString()).toBe("hi");
    await new Promise((r) => setTimeout(r, 50));
    expect(clients[0]!.frames.filter((f) => f.command === "MESSAGE")).toEqual([]);
  });

  it("answers a frame before CONNECT and a malformed frame with ERROR, then closes", async () => {
    const server = await kit.start();
    const early = await rawClient(server.url);
    early.send("SEND", { destination: "/queue/echo" });
    expect((await early.next("ERROR")).headers.message).toBe("not connected");
    await expect.poll(() => early.ws.readyState, { timeout: 3000 }).toBe(WebSocket.CLOSED);

    const bad = await rawClient(server.url);
    bad.send("CONNECT", { "accept-version": "1.2", host: "x" });
    await bad.next("CONNECTED");
    bad.ws.send("SEND\nbroken header line\n\n\0");
    expect((await bad.next("ERROR")).headers.message).toBe("malformed frame");
  });

  it("sends heart-beats at the negotiated interval", async () => {
    const server = await kit.start();
    const c = await rawClient(server.url);
    c.send("CONNECT", { "accept-version": "1.2", host: "x", "heart-beat": "0,100" });
    await c.next("CONNECTED");
    await expect.poll(() => c.beats(), { timeout: 3000 }).toBeGreaterThanOrEqual(2);
  });
});
