import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { planSchema } from "@volley/contracts";
import { importHar } from "./import-har";

const FIXTURE = path.resolve(import.meta.dirname, "../fixtures/socketio-chat.har");
const recorded = () => JSON.parse(readFileSync(FIXTURE, "utf8")) as unknown;

const valid = (plan: unknown) => {
  const r = planSchema.safeParse(plan);
  expect(r.success, r.success ? "" : JSON.stringify(r.error.issues)).toBe(true);
  return r.success ? r.data : undefined!;
};

type Entry = Record<string, unknown>;
const wsEntry = (url: string, messages: { type: "send" | "receive"; data: string }[], headers: Record<string, string> = {}): Entry => ({
  _resourceType: "websocket",
  request: { method: "GET", url, headers: Object.entries(headers).map(([name, value]) => ({ name, value })) },
  response: { status: 101, headers: [] },
  _webSocketMessages: messages.map((m, i) => ({ ...m, time: 1_700_000_000 + i / 10, opcode: 1 })),
});
const fetchEntry = (method: string, url: string, body: unknown, response: unknown, responseHeaders: Record<string, string> = {}): Entry => ({
  _resourceType: "fetch",
  request: {
    method,
    url,
    headers: [{ name: "Content-Type", value: "application/json" }],
    postData: { mimeType: "application/json", text: JSON.stringify(body) },
  },
  response: {
    status: 200,
    headers: Object.entries(responseHeaders).map(([name, value]) => ({ name, value })),
    content: { mimeType: "application/json", text: JSON.stringify(response) },
  },
});
const har = (...entries: Entry[]) => ({ log: { version: "1.2", entries } });

describe("importHar: the committed Chromium recording of the Socket.IO chat", () => {
  it("becomes login → connect with the token in auth → join/joined → chat messages matched by clientMsgId", () => {
    const { plan, notes } = importHar(recorded());
    const p = valid(plan);
    expect(p.target).toMatchObject({ protocol: "socketio" });
    expect(p.target.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/?$/);
    expect(p.name).toMatch(/^Imported from HAR: 127\.0\.0\.1:\d+ \(Socket\.IO\)$/);
    // The client polled first and upgraded: the default transports, no version override.
    expect(plan.target.socketio).toBeUndefined();
    expect(plan.flow!.setup).toEqual([
      { request: { name: "login", method: "POST", url: "/login", json: { user: "ann" }, capture: { token: "$.token" } } },
      { connect: { auth: { token: "{{ vars.token }}" } } },
      { send: { name: "join", event: "join", json: { room: "lobby" } } },
      { waitFor: { name: "joined", event: "joined" } },
    ]);
    expect(plan.flow!.messages).toEqual([
      {
        name: "chat",
        event: "chat",
        json: { room: "lobby", text: "hello #{{ msg.number }}", clientMsgId: "{{ msg.id }}" },
        reply: { event: "message", match: { path: "$.clientMsgId", equals: "{{ msg.id }}" } },
      },
    ]);
    expect(p.connections.count).toBe(10);
    expect(p.scenario).toMatchObject({ kind: "echo", duration: "30s", message: { rate: 1 } });
    expect(notes.join("\n")).toMatch(/schedule is a small default/);
    expect(notes.join("\n")).toMatch(/room "lobby"/);
  });

  it("points at another server and takes the caller's schedule", () => {
    const { plan } = importHar(recorded(), { targetUrl: "http://127.0.0.1:9999", connections: 3, rate: 5, duration: "2s", name: "chat" });
    const p = valid(plan);
    expect(p.target.url).toBe("http://127.0.0.1:9999/");
    expect(p).toMatchObject({ name: "chat", connections: { count: 3 }, scenario: { duration: "2s", message: { rate: 5 } } });
  });
});

describe("importHar: raw WebSocket", () => {
  const login = fetchEntry(
    "POST",
    "https://app.test/api/session",
    { email: "a@b.c" },
    { sessionToken: "tok_9f8e7d6c5b", user: { id: "u1" } },
    { "Set-Cookie": "sid=abc; HttpOnly" },
  );
  const socket = wsEntry(
    "wss://app.test/live?token=tok_9f8e7d6c5b&v=2",
    [
      { type: "send", data: JSON.stringify({ type: "auth", token: "tok_9f8e7d6c5b" }) },
      { type: "receive", data: JSON.stringify({ type: "ready" }) },
      { type: "send", data: JSON.stringify({ type: "quote", symbol: "ACME", requestId: "r-a81f" }) },
      { type: "receive", data: JSON.stringify({ type: "tick", symbol: "ACME", price: 1 }) },
      { type: "receive", data: JSON.stringify({ type: "quote.result", ref: "r-a81f", price: 10 }) },
      { type: "send", data: JSON.stringify({ type: "quote", symbol: "ACME", requestId: "r-77c2" }) },
      { type: "receive", data: JSON.stringify({ type: "quote.result", ref: "r-77c2", price: 11 }) },
      { type: "send", data: JSON.stringify({ type: "quote", symbol: "ACME", requestId: "r-0b13" }) },
      { type: "receive", data: JSON.stringify({ type: "quote.result", ref: "r-0b13", price: 12 }) },
    ],
    {
      "User-Agent": "Mozilla/5.0",
      "Sec-WebSocket-Key": "x",
      "Sec-WebSocket-Protocol": "quotes.v2",
      Cookie: "sid=abc; theme=dark",
      "X-Tenant": "acme",
      "Accept-Encoding": "gzip",
    },
  );

  it("captures the login's token where the socket uses it, matches replies by the echoed id, keeps app headers only", () => {
    const { plan, notes } = importHar(har(fetchEntry("GET", "https://cdn.test/x.js", {}, {}), login, socket));
    valid(plan);
    expect(plan.target).toEqual({ url: "wss://app.test/live?v=2", protocol: "ws", ws: { subprotocols: ["quotes.v2"] } });
    const [request, connect, auth, ready] = plan.flow!.setup!;
    expect(request).toEqual({
      request: { name: "session", method: "POST", url: "/api/session", json: { email: "a@b.c" }, capture: { sessionToken: "$.sessionToken" } },
    });
    // sid came from the login (the agent's cookie jar sends it); theme was set elsewhere and stays.
    expect(connect).toEqual({ connect: { headers: { Cookie: "theme=dark", "X-Tenant": "acme" }, query: { token: "{{ vars.sessionToken }}" } } });
    expect(auth).toEqual({ send: { name: "auth", json: { type: "auth", token: "{{ vars.sessionToken }}" } } });
    expect(ready).toEqual({ waitFor: { name: "ready", match: { path: "$.type", equals: "ready" } } });
    expect(plan.flow!.messages).toEqual([
      { name: "quote", json: { type: "quote", symbol: "ACME", requestId: "{{ msg.id }}" }, reply: { match: { path: "$.ref", equals: "{{ msg.id }}" } } },
    ]);
    expect(notes.join("\n")).toMatch(/received but not awaited by the plan: tick/);
  });

  it("without an echoed id the reply is the next message in order; counters become msg.number when the recording counts from 1", () => {
    const { plan, notes } = importHar(
      har(
        wsEntry("ws://127.0.0.1:9001/echo", [
          { type: "send", data: JSON.stringify({ n: 1, text: "ping" }) },
          { type: "receive", data: JSON.stringify({ pong: true }) },
          { type: "send", data: JSON.stringify({ n: 2, text: "ping" }) },
          { type: "receive", data: JSON.stringify({ pong: true }) },
          { type: "send", data: "plain text" },
        ]),
      ),
    );
    valid(plan);
    expect(plan.flow!.messages).toEqual([{ name: "message", json: { n: "{{ msg.number }}", text: "ping" }, reply: {} }]);
    expect(notes.join("\n")).toMatch(/"text" was sent once, after the messages began/);
    const fromZero = importHar(
      har(
        wsEntry(
          "ws://127.0.0.1:9001/echo",
          [0, 1, 2].map((n) => ({ type: "send" as const, data: JSON.stringify({ n, text: `ping ${n}` }) })),
        ),
      ),
    );
    expect(fromZero.plan.flow!.messages?.[0]).toMatchObject({ json: { n: "{{ msg.seq }}", text: "ping {{ msg.seq }}" } });
  });

  it("a login on another origin (the committed Chromium recording of the shop behind an auth service) stays a per-connection step with its absolute URL", () => {
    const { plan, notes } = importHar(JSON.parse(readFileSync(path.resolve(import.meta.dirname, "../fixtures/ws-shop-sso.har"), "utf8")));
    valid(plan);
    expect(plan.target.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/shop$/);
    const login = plan.flow!.setup![0] as { request: { url: string; capture: unknown } };
    expect(login.request.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/login$/);
    expect(new URL(login.request.url).port).not.toBe(new URL(plan.target.url).port);
    expect(login.request.capture).toEqual({ token: "$.token" });
    expect(plan.flow!.setup![1]).toEqual({ connect: { query: { token: "{{ vars.token }}" } } });
    expect(notes.join("\n")).toContain(
      `is on another origin than the socket, so every connection calls it there first (what it captures is its own); pointing the plan at another server does not move it: import with --origin ${new URL(login.request.url).origin}=`,
    );
  });
});

describe("importHar: JSON-RPC over WebSocket (numeric ids)", () => {
  it("an id echoed back under the same key becomes msg.id, the reply matched on it", () => {
    const call = (id: number, text: string) => ({ type: "send" as const, data: JSON.stringify({ jsonrpc: "2.0", id, method: "echo", params: { text } }) });
    const result = (id: number, text: string) => ({ type: "receive" as const, data: JSON.stringify({ jsonrpc: "2.0", id, result: { text } }) });
    const { plan, notes } = importHar(
      har(wsEntry("ws://127.0.0.1:9011/rpc", [call(1, "a"), call(2, "b"), result(2, "b"), result(1, "a"), call(3, "c"), result(3, "c")])),
    );
    valid(plan);
    expect(plan.flow!.messages).toEqual([
      {
        name: "echo",
        json: { jsonrpc: "2.0", id: "{{ msg.id }}", method: "echo", params: { text: "a" } },
        reply: { match: { path: "$.id", equals: "{{ msg.id }}" } },
      },
    ]);
    expect(notes.join("\n")).toMatch(/echo: its id \$\.id was a number in the recording/);
    expect(notes.join("\n")).toMatch(/params\.text varies across the recorded messages/);
  });
});

describe("importHar: Socket.IO framing", () => {
  it("decodes namespaces, acks and Engine.IO 3 (Socket.IO 2) straight over WebSocket", () => {
    const { plan } = importHar(
      har(
        wsEntry("ws://10.0.0.5:3000/socket.io/?EIO=3&transport=websocket", [
          { type: "receive", data: '0{"sid":"x","upgrades":[]}' },
          { type: "send", data: "40/game?key=k," },
          { type: "receive", data: "40/game" },
          { type: "send", data: '42/game,1["move",{"x":1}]' },
          { type: "receive", data: '43/game,1[{"ok":true}]' },
          { type: "send", data: "2" },
          { type: "receive", data: "3" },
          { type: "send", data: '42/game,2["move",{"x":2}]' },
          { type: "receive", data: '43/game,2[{"ok":true}]' },
        ]),
      ),
    );
    valid(plan);
    expect(plan.target).toEqual({ url: "http://10.0.0.5:3000/game", protocol: "socketio", socketio: { version: 2, transports: ["websocket"] } });
    expect(plan.flow!.setup).toEqual([{ connect: { query: { key: "k" } } }]);
    expect(plan.flow!.messages).toEqual([{ name: "move", event: "move", json: { x: "{{ msg.number }}" }, reply: { ack: true } }]);
  });
});

describe("importHar: errors name what is wrong and how to record", () => {
  it("refuses what is not a HAR", () => {
    expect(() => importHar({ log: {} })).toThrow("not a HAR: log.entries missing");
    expect(() => importHar("{")).toThrow(/^not a HAR: the file is not JSON/);
    expect(() => importHar({ log: { entries: [{ request: { url: "x" } }] } })).toThrow(/^not a HAR: log\.entries\.0\.request\.method/);
  });

  it("refuses a HAR without WebSocket messages, saying how to get them", () => {
    expect(() => importHar(har(fetchEntry("POST", "https://a.test/login", {}, {})))).toThrow(
      /no WebSocket entry \(_webSocketMessages\) in the HAR: record with the DevTools Network panel open and 'Preserve log'/,
    );
    expect(() => importHar(har(wsEntry("ws://a.test/", [])))).toThrow(/1 WebSocket entry but no messages/);
  });
});

describe("importHar: binary WebSocket frames (the committed Chromium recording of the msgpack app)", () => {
  const msgpack = () => JSON.parse(readFileSync(path.resolve(import.meta.dirname, "../fixtures/msgpack-ws.har"), "utf8")) as unknown;

  it("keeps MessagePack frames as json templates with codec msgpack, and an unknown codec's frame as its bytes, named in the notes", () => {
    const { plan, notes } = importHar(msgpack());
    valid(plan);
    expect(plan.flow!.setup).toEqual([
      { send: { name: "binary", binary: { base64: "wXYx" } } },
      { send: { name: "echo", json: { id: "hello", op: "echo", data: "hi" }, codec: "msgpack" } },
      { waitFor: { name: "echo-2", match: { path: "$.op", equals: "echo" }, codec: "msgpack" } },
    ]);
    expect(plan.flow!.messages).toEqual([
      {
        name: "add",
        json: { id: "{{ msg.id }}", op: "add", a: "{{ msg.number }}", b: 2 },
        codec: "msgpack",
        reply: { match: { path: "$.id", equals: "{{ msg.id }}" } },
      },
    ]);
    expect(notes).toContainEqual(expect.stringMatching(/^check: 1 binary WebSocket messages are in a codec the import does not know/));
    expect(notes).not.toContainEqual(expect.stringMatching(/left out/));
  });
});
