import { describe, expect, it } from "vitest";
import { stompOptionsSchema, type StompOptions } from "@volley/contracts";
import { startStompEchoServer, startStompSockjsChat, STOMP_CHAT_HISTORY, STOMP_CHAT_SEND, STOMP_CHAT_TOPIC } from "@volley/targets";
import type { Connection } from "./driver";
import { closeByUs, closed, collect, connectError, driverTestKit, EVERY_BYTE, freePort, roundTrip } from "./driver-test-kit";
import { stompDriver } from "./stomp-driver";

const kit = driverTestKit();
const options = (o: Partial<StompOptions> = {}) => stompOptionsSchema.parse(o);
const TRANSPORTS = ["websocket", "xhr-streaming", "xhr-polling"] as const;

/** A flow's view of the connection: every MESSAGE with the destination it came on. */
function events(conn: Connection): { event: string | undefined; data: unknown }[] {
  const seen: { event: string | undefined; data: unknown }[] = [];
  conn.onEvent!((event, data) => seen.push({ event, data }));
  return seen;
}

describe("stomp driver over SockJS (an http:// endpoint)", () => {
  for (const transport of TRANSPORTS) {
    it(`${transport}: Volley's own bytes echo through /queue/echo as base64 text, heart-beats keep it open`, async () => {
      const server = await kit.serve(startStompEchoServer());
      const stomp = options({ transports: [transport], heartbeat: { outgoing: 100, incoming: 100 } });
      const conn = await kit.connect(stompDriver, { url: server.sockjsUrl, stomp });
      const got = await roundTrip(conn, EVERY_BYTE);
      expect(Buffer.compare(got as Buffer, EVERY_BYTE)).toBe(0);
      await new Promise((r) => setTimeout(r, 400));
      const three = collect(conn, 3);
      for (const n of [1, 2, 3]) conn.send(Buffer.alloc(40, n));
      expect((await three).map((b) => (b as Buffer)[0])).toEqual([1, 2, 3]);
      await closeByUs(conn);
      // Over xhr the server ends a session only after SockJS's disconnect delay (5 s): the DISCONNECT is checked on the chat below.
      if (transport === "websocket") await expect.poll(() => server.connections(), { timeout: 3000 }).toBe(0);
    });

    it(`${transport}: a Spring-like chat — SEND to /app/chat.send with a receipt, the server's JSON back on /topic/public, heart-beats seen by the server`, async () => {
      const app = await kit.serve(startStompSockjsChat({ heartbeatMs: 100, users: { alice: "secret" } }));
      const stomp = options({ transports: [transport], login: "alice", passcode: "secret", heartbeat: { outgoing: 100, incoming: 100 } });
      const conn = await kit.connect(stompDriver, { url: app.url, stomp, listen: [STOMP_CHAT_TOPIC] });
      const seen = events(conn);
      // The SUBSCRIBE's receipt came before the connection opened.
      expect(app.stats()).toMatchObject({ sessions: 1, receipts: 1 });
      conn.emit!({ event: STOMP_CHAT_SEND, body: { content: "héllo", clientMsgId: "m1" }, json: true, headers: { receipt: "send-1" } });
      await expect.poll(() => seen.length, { timeout: 3000 }).toBe(1);
      expect(seen[0]!.event).toBe(STOMP_CHAT_TOPIC);
      expect(JSON.parse(seen[0]!.data as string)).toMatchObject({
        type: "CHAT",
        sender: "alice",
        content: "héllo",
        clientMsgId: "m1",
        id: expect.stringMatching(/^msg_/),
      });
      // The SEND's receipt: the server's own count, with the SUBSCRIBE's.
      await expect.poll(() => app.stats().receipts, { timeout: 3000 }).toBe(2);
      // Heart-beats both ways over SockJS, counted by the server.
      await expect.poll(() => Math.min(app.stats().heartbeatsReceived, app.stats().heartbeatsSent), { timeout: 5000 }).toBeGreaterThanOrEqual(3);
      expect(app.stats()).toMatchObject({ sends: 1, broadcast: 1, messages: 1, rejected: 0, errors: 0 });
      // A close by us is a DISCONNECT (with its receipt) through the same session: CONNECT, SUBSCRIBE, SEND, DISCONNECT.
      await closeByUs(conn);
      await expect.poll(() => app.stats(), { timeout: 3000 }).toMatchObject({ frames: 4, receipts: 3 });
    });
  }

  for (const transport of TRANSPORTS) {
    it(`${transport}: a MESSAGE that comes with the subscription's RECEIPT (a @SubscribeMapping answer) is kept for the engine's handler`, async () => {
      const app = await kit.serve(startStompSockjsChat());
      const stomp = options({ transports: [transport] });
      const writer = await kit.connect(stompDriver, { url: app.url, stomp, listen: [STOMP_CHAT_TOPIC] });
      writer.emit!({ event: STOMP_CHAT_SEND, body: { content: "earlier" }, json: true });
      await expect.poll(() => app.stats().broadcast, { timeout: 3000 }).toBe(1);
      // The handler is attached only after connect() resolved on the RECEIPT: the history came with it.
      const conn = await kit.connect(stompDriver, { url: app.url, stomp, listen: [STOMP_CHAT_HISTORY] });
      const seen = events(conn);
      // xhr-polling: the MESSAGE may come on the poll after the RECEIPT's.
      await expect.poll(() => seen.length, { timeout: 3000 }).toBe(1);
      expect(seen[0]!.event).toBe(STOMP_CHAT_HISTORY);
      expect(JSON.parse(seen[0]!.data as string)).toMatchObject([{ content: "earlier" }]);
    });
  }

  it("an endpoint behind a log-in: refused without its session cookie (told to set target.headers), open with it on every transport", async () => {
    const app = await kit.serve(startStompSockjsChat({ sessionCookie: "SESSION=s3cr3t" }));
    const err = await connectError(stompDriver, { url: app.url, stomp: options({ transports: ["xhr-streaming"] }) });
    expect(err.errorClass).toBe("handshake");
    expect(err.detail).toMatch(/^the SockJS endpoint refused \/info \(HTTP 401 at .*\/ws\/info\): .*give them in target\.headers$/);
    const unauthorized = app.stats().unauthorized;
    expect(unauthorized).toBeGreaterThanOrEqual(1);
    const headers = { cookie: "theme=dark; SESSION=s3cr3t" };
    for (const transport of TRANSPORTS) {
      const conn = await kit.connect(stompDriver, { url: app.url, headers, stomp: options({ transports: [transport] }), listen: [STOMP_CHAT_TOPIC] });
      const seen = events(conn);
      // Every request of the session carries it: the xhr sends too, or the chat would not broadcast.
      conn.emit!({ event: STOMP_CHAT_SEND, body: { content: transport }, json: true });
      await expect.poll(() => seen.length, { timeout: 3000 }).toBe(1);
      await closeByUs(conn);
    }
    expect(app.stats()).toMatchObject({ broadcast: 3, sessions: 3, unauthorized });
  });

  it("joins a room over SockJS: a member's message reaches the other members only", async () => {
    const server = await kit.serve(startStompEchoServer());
    const conns = await Promise.all([1, 2, 3].map(() => kit.connect(stompDriver, { url: server.sockjsUrl, room: "lobby" })));
    const seen: string[] = [];
    for (const [i, conn] of conns.entries()) conn.onMessage((d) => void seen.push(`${i}:${(d as Buffer)[0]}`));
    conns[0]!.send(Buffer.alloc(40, 9));
    await expect.poll(() => seen.length, { timeout: 3000 }).toBe(2);
    expect(seen.sort()).toEqual(["1:9", "2:9"]);
  });

  it("reports the server's close of an open session", async () => {
    const app = await kit.serve(startStompSockjsChat());
    const conn = await kit.connect(stompDriver, { url: app.url, stomp: options({ transports: ["xhr-streaming"] }), listen: [STOMP_CHAT_TOPIC] });
    const info = closed(conn);
    await kit.stop(app);
    expect(await info).toMatchObject({ byServer: true });
  });

  it("a #fragment on the URL, which sockjs-client and ws throw on, is refused naming the field", async () => {
    for (const url of ["http://127.0.0.1:9/ws#chat", "ws://127.0.0.1:9/stomp#chat"])
      expect(await connectError(stompDriver, { url })).toMatchObject({
        errorClass: "other",
        detail: "a STOMP endpoint's URL takes no #fragment: remove it from target.url",
      });
  });

  it("an unreachable endpoint: refused, with the cause", async () => {
    expect(await connectError(stompDriver, { url: `http://127.0.0.1:${await freePort()}/ws` })).toMatchObject({
      errorClass: "refused",
      detail: "ECONNREFUSED",
    });
  });

  it("a bad passcode: the server's ERROR message quoted, and the fields to check", async () => {
    const app = await kit.serve(startStompSockjsChat({ users: { alice: "secret" } }));
    const err = await connectError(stompDriver, { url: app.url, stomp: options({ login: "alice", passcode: "wrong", transports: ["xhr-polling"] }) });
    expect(err.errorClass).toBe("handshake");
    expect(err.detail).toBe('the broker answered CONNECT with ERROR "Bad credentials for login alice": check stomp.login, stomp.passcode and stomp.host');
    expect(app.stats().refused).toBe(1);
  });

  it("an http:// URL with no SockJS behind it: the endpoint did not answer /info, and a plain WebSocket endpoint wants ws://", async () => {
    const server = await kit.serve(startStompEchoServer());
    const err = await connectError(stompDriver, { url: `http://127.0.0.1:${server.port}/stomp` });
    expect(err.errorClass).toBe("handshake");
    expect(err.detail).toBe(
      `the endpoint did not answer SockJS /info (HTTP 404 at http://127.0.0.1:${server.port}/stomp/info): give the URL of a SockJS endpoint, or a ws:// or wss:// URL if it is a plain WebSocket STOMP endpoint`,
    );
  });
});
