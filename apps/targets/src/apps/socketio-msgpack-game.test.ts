import msgpackParser from "socket.io-msgpack-parser";
import { io as connect, type Socket } from "socket.io-client";
import { afterEach, describe, expect, it } from "vitest";
import type { TestApp } from "./app-http";
import { type SocketioMsgpackGameStats, startSocketioMsgpackGame } from "./socketio-msgpack-game";

const apps: TestApp<SocketioMsgpackGameStats>[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.disconnect();
  for (const a of apps.splice(0)) await a.close();
});

async function player(msgpack = true): Promise<{ app: TestApp<SocketioMsgpackGameStats>; s: Socket }> {
  const app = await startSocketioMsgpackGame();
  apps.push(app);
  const s = connect(app.url, { transports: ["websocket"], reconnection: false, forceNew: true, ...(msgpack ? { parser: msgpackParser } : {}) });
  sockets.push(s);
  return { app, s };
}

const once = <T>(s: Socket, event: string) => new Promise<T>((resolve) => s.once(event, (d: T) => resolve(d)));

describe("socket.io game app on socket.io-msgpack-parser", () => {
  it("answers moves with moved (the server's tick, player id and time) or the ack, refuses a move without numbers, echoes", async () => {
    const { app, s } = await player();
    await once(s, "connect");
    const moved = once<Record<string, unknown>>(s, "moved");
    s.emit("move", { clientMoveId: "m1", x: 3, y: 4 });
    expect(await moved).toEqual({ clientMoveId: "m1", player: expect.stringMatching(/^p_/), x: 3, y: 4, tick: 1, ts: expect.any(Number) });
    expect(await s.emitWithAck("move", { clientMoveId: "m2", x: 1, y: 1 })).toEqual({ ok: true, tick: 2 });
    const refused = once<Record<string, unknown>>(s, "move_error");
    s.emit("move", { clientMoveId: "m3", x: "1", y: 1 });
    expect(await refused).toEqual({ clientMoveId: "m3", error: "x and y must be numbers" });
    // Binary stays binary through MessagePack, a map stays a map.
    const bytes = Buffer.from([0, 1, 255]);
    const echoed = new Promise<unknown[]>((resolve) => s.once("echo", (...args: unknown[]) => resolve(args)));
    s.emit("echo", bytes, { a: [1, "x"] });
    const [b, m] = await echoed;
    expect(Buffer.from(b as Buffer)).toEqual(bytes);
    expect(m).toEqual({ a: [1, "x"] });
    expect(Buffer.from((await s.emitWithAck("echo", bytes)) as Buffer)).toEqual(bytes);
    expect(app.stats()).toEqual({ connections: 1, echoes: 2, moves: 2, moved: 2, rejected: 1 });
    const stats = await fetch(`${app.httpUrl}/stats`);
    expect(await stats.json()).toEqual(app.stats());
  });

  it("a client on the default parser never connects: the server cannot read its CONNECT", async () => {
    const { app, s } = await player(false);
    const why = await new Promise<string>((resolve) => {
      s.once("connect", () => resolve("connected"));
      s.once("connect_error", (e) => resolve(`connect_error ${e.message}`));
      s.io.once("close", (reason) => resolve(`closed: ${reason}`));
    });
    expect(why).toMatch(/^closed: /);
    expect(app.stats().connections).toBe(0);
  });
});
