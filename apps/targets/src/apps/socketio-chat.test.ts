import { afterEach, describe, expect, it } from "vitest";
import { io as connect, type Socket } from "socket.io-client";
import type { TestApp } from "./app-http";
import { startSocketioChat, type ChatMessage, type SocketioChatStats } from "./socketio-chat";

const apps: TestApp<SocketioChatStats>[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.disconnect();
  for (const a of apps.splice(0)) await a.close();
});

async function start() {
  const app = await startSocketioChat();
  apps.push(app);
  return app;
}

async function login(app: TestApp<unknown>, user: string): Promise<{ token: string; userId: string }> {
  const res = await fetch(`${app.httpUrl}/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ user }) });
  expect(res.status).toBe(200);
  return (await res.json()) as { token: string; userId: string };
}

function open(app: TestApp<unknown>, auth: Record<string, unknown>): Socket {
  const s = connect(app.url, { auth, transports: ["websocket"], reconnection: false, forceNew: true });
  sockets.push(s);
  return s;
}

const once = <T>(s: Socket, event: string) => new Promise<T>((resolve) => s.once(event, (d: T) => resolve(d)));

async function member(app: TestApp<unknown>, user: string, room: string) {
  const { token } = await login(app, user);
  const s = open(app, { token });
  await once(s, "connect");
  const joined = once<{ room: string; members: number }>(s, "joined");
  s.emit("join", { room });
  return { s, joined: await joined };
}

describe("socketio chat", () => {
  it("logs in, refuses a missing or unknown token, joins without an ack and broadcasts with server ids", async () => {
    const app = await start();
    const a = await login(app, "ann");
    const b = await login(app, "ann");
    expect(a.token).not.toBe(b.token);
    expect(a.userId).not.toBe(b.userId);

    for (const auth of [{}, { token: "nope" }]) {
      const err = await once<Error>(open(app, auth), "connect_error");
      expect(err.message).toBe("unauthorized");
    }

    const ann = await member(app, "ann", "lobby");
    expect(ann.joined).toEqual({ room: "lobby", members: 1 });
    const bob = await member(app, "bob", "lobby");
    expect(bob.joined).toEqual({ room: "lobby", members: 2 });
    const eve = await member(app, "eve", "other");

    const eveGot: ChatMessage[] = [];
    eve.s.on("message", (m: ChatMessage) => eveGot.push(m));
    const toAnn = once<ChatMessage>(ann.s, "message");
    const toBob = once<ChatMessage>(bob.s, "message");
    const before = Date.now();
    ann.s.emit("chat", { room: "lobby", text: "hello", clientMsgId: "c1" });
    const [m1, m2] = await Promise.all([toAnn, toBob]);
    expect(m1).toEqual(m2);
    expect(m1).toMatchObject({ room: "lobby", user: "ann", text: "hello", clientMsgId: "c1" });
    expect(m1.id).toMatch(/^m_/);
    expect(m1.ts).toBeGreaterThanOrEqual(before - 1);

    // Without a clientMsgId, and with an acknowledgement: the ack carries the message's id.
    const next = once<ChatMessage>(bob.s, "message");
    const acked = await bob.s.timeout(5000).emitWithAck("chat", { room: "lobby", text: "yo" });
    const m3 = await next;
    expect(acked).toEqual({ id: m3.id });
    expect(m3).not.toHaveProperty("clientMsgId");
    expect(m3.id).not.toBe(m1.id);

    // A chat to a room the sender has not joined is refused, not broadcast.
    const refused = once<{ error: string }>(eve.s, "chat_error");
    eve.s.emit("chat", { room: "lobby", text: "sneak" });
    expect((await refused).error).toContain("join");

    const res = await fetch(`${app.httpUrl}/stats`);
    const served = await res.json();
    expect(served).toEqual(app.stats());
    expect(served).toEqual({ logins: 5, connections: 3, authFailures: 2, joins: 3, chatsReceived: 2, messagesDelivered: 4 });
    expect(eveGot).toEqual([]);
  });

  it("counts deliveries per receiver over a bounded burst", async () => {
    const app = await start();
    const members = await Promise.all(["a", "b", "c"].map((u) => member(app, u, "r")));
    const received = members.map(() => new Set<string>());
    const all = members.map(
      ({ s }, i) =>
        new Promise<void>((resolve) =>
          s.on("message", (m: ChatMessage) => {
            received[i]!.add(m.clientMsgId ?? "");
            if (received[i]!.size === 20) resolve();
          }),
        ),
    );
    for (let n = 0; n < 20; n++) members[n % 3]!.s.emit("chat", { room: "r", text: `t${n}`, clientMsgId: `k${n}` });
    await Promise.all(all);
    expect(app.stats()).toMatchObject({ chatsReceived: 20, messagesDelivered: 60 });
  });

  it("answers login mistakes with a 400 naming the field", async () => {
    const app = await start();
    const res = await fetch(`${app.httpUrl}/login`, { method: "POST", body: JSON.stringify({ name: "x" }) });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: "user is required (a non-empty string)" });
    expect((await fetch(`${app.httpUrl}/login`)).status).toBe(405);
    expect(app.stats().logins).toBe(0);
  });
});
