import { describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { SOCKJS_BROADCAST_PREFIX, startSockjsEchoServer } from "./sockjs-echo-server";
import type { EchoServer } from "./echo-server";
import { echoTestKit } from "./echo-test-kit";

/** Uses SockJS's raw websocket endpoint (`/echo/websocket`): plain text frames, no SockJS framing. */
const { start, track } = echoTestKit(startSockjsEchoServer);

async function open(server: EchoServer, query = "", prefix = "/echo") {
  const ws = track(new WebSocket(`ws://127.0.0.1:${server.port}${prefix}/websocket${query}`));
  const got: { data: string; at: number }[] = [];
  ws.on("message", (d) => got.push({ data: String(d), at: performance.now() }));
  await new Promise((resolve, reject) => (ws.once("open", resolve), ws.once("error", reject)));
  const until = async (n: number) => {
    while (got.length < n) await new Promise((r) => setTimeout(r, 5));
    return got;
  };
  return { ws, until };
}

describe("sockjs echo server", () => {
  it("echoes each message unchanged, in order, after the connection's ?delay=", async () => {
    const server = await start(300);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/echo`);
    const { ws, until } = await open(server, "?delay=15");
    const sentAt = performance.now();
    for (const m of ["a", "bé", "AAEC+/8="]) ws.send(m);
    const got = await until(3);
    expect(got.map((g) => g.data)).toEqual(["a", "bé", "AAEC+/8="]);
    expect(got[0]!.at - sentAt).toBeGreaterThanOrEqual(14);
    expect(got[2]!.at - sentAt).toBeLessThan(250); // the server's own 300 ms was replaced
    expect(server.connections()).toBe(1);
  });

  it("holds replies while stalled", async () => {
    const server = await start();
    const { ws, until } = await open(server);
    const sentAt = performance.now();
    server.stall(150);
    ws.send("x");
    expect((await until(1))[0]!.at - sentAt).toBeGreaterThanOrEqual(140);
  });

  it("answers /info, refuses a bad delay with 400 and other paths with 404", async () => {
    const server = await start();
    expect((await fetch(`${server.url}/info`)).status).toBe(200);
    expect((await fetch(`${server.url}/info?delay=soon`)).status).toBe(400);
    expect((await fetch(`http://127.0.0.1:${server.port}/nope`)).status).toBe(404);
  });

  it("/broadcast: every session in one room, each message to everyone, the sender included", async () => {
    const server = await start();
    const [a, b, c] = [await open(server, "", SOCKJS_BROADCAST_PREFIX), await open(server, "", SOCKJS_BROADCAST_PREFIX), await open(server)];
    a.ws.send("hi");
    expect((await a.until(1)).map((g) => g.data)).toEqual(["hi"]);
    expect((await b.until(1)).map((g) => g.data)).toEqual(["hi"]);
    // A plain /echo session is in no room: its first message is its own echo, not a's broadcast.
    c.ws.send("own");
    expect((await c.until(1)).map((g) => g.data)).toEqual(["own"]);
    expect((await fetch(`http://127.0.0.1:${server.port}${SOCKJS_BROADCAST_PREFIX}/info`)).status).toBe(200);
  });
});
