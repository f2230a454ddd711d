import { describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { startSocketioEchoServer } from "./socketio-echo-server";
import type { EchoServer } from "./echo-server";
import { echoTestKit } from "./echo-test-kit";

/**
 * Speaks the Socket.IO v4 wire format by hand over Engine.IO's websocket transport, so the target
 * is tested without the client the agent uses: "0" open, "40" namespace connect, "42" event,
 * "42<id>" event wanting an ack, "43<id>" the ack, "44" a refused connect.
 */
const { start, track } = echoTestKit(startSocketioEchoServer);

/** Opens Engine.IO, joins `nsp`, and returns the socket with a queue of the packets that follow. */
async function join(server: EchoServer, query = "", nsp = "/") {
  const ws = track(new WebSocket(`ws://127.0.0.1:${server.port}/socket.io/?EIO=4&transport=websocket${query}`));
  const packets: string[] = [];
  const waiters: ((p: string) => void)[] = [];
  ws.on("message", (d) => {
    const p = String(d);
    if (p === "2") return ws.send("3"); // Engine.IO ping → pong
    const w = waiters.shift();
    if (w) w(p);
    else packets.push(p);
  });
  const next = () => new Promise<string>((resolve) => (packets.length > 0 ? resolve(packets.shift()!) : waiters.push(resolve)));
  await new Promise((resolve, reject) => (ws.once("open", resolve), ws.once("error", reject)));
  expect(await next()).toMatch(/^0\{"sid"/);
  ws.send(nsp === "/" ? "40" : `40${nsp},`);
  return { ws, next, joined: await next() };
}

describe("socket.io echo server", () => {
  it("answers an event with the same event, and an ack request through the ack, on any namespace", async () => {
    const server = await start();
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    const main = await join(server);
    expect(main.joined).toMatch(/^40\{"sid"/);
    main.ws.send('42["echo","hi",{"n":1}]');
    expect(await main.next()).toBe('42["echo","hi",{"n":1}]');
    main.ws.send('427["echo","x"]');
    expect(await main.next()).toBe('437["x"]');

    const other = await join(server, "", "/load");
    expect(other.joined).toMatch(/^40\/load,\{"sid"/);
    other.ws.send('42/load,["ping",1]');
    expect(await other.next()).toBe('42/load,["ping",1]');
    expect(server.connections()).toBe(2);
  });

  it("answers `ping` with an ack by `{count}` (SocketCluster's pong), counted per connection, on the /ping namespace", async () => {
    const server = await start();
    const a = await join(server, "", "/ping");
    a.ws.send('42/ping,1["ping","x"]');
    expect(await a.next()).toBe('43/ping,1[{"count":1}]');
    a.ws.send('42/ping,2["ping","y"]');
    expect(await a.next()).toBe('43/ping,2[{"count":2}]');
    const b = await join(server, "", "/ping");
    b.ws.send('42/ping,5["ping","z"]');
    expect(await b.next()).toBe('43/ping,5[{"count":1}]');
  });

  it("holds each reply for the connection's ?delay= and keeps them in order", async () => {
    const server = await start(300);
    const { ws, next } = await join(server, "&delay=15");
    const sentAt = performance.now();
    for (const n of [1, 2, 3]) ws.send(`42["echo",${n}]`);
    const got = [await next(), await next(), await next()];
    const elapsed = performance.now() - sentAt;
    expect(got).toEqual(['42["echo",1]', '42["echo",2]', '42["echo",3]']);
    expect(elapsed).toBeGreaterThanOrEqual(14);
    expect(elapsed).toBeLessThan(250); // the server's own 300 ms was replaced
  });

  it("refuses a malformed delay at the namespace connect", async () => {
    const server = await start();
    const { joined } = await join(server, "&delay=soon");
    expect(joined).toMatch(/^44\{"message":"invalid delay/);
  });
});
