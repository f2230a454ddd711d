import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, planSchema } from "@volley/contracts";
import { runShard, type EngineFrame } from "@volley/agent";
import { startJsonRpcWs, startMsgpackWs, startSocketioChat, startWsShop, type TestApp } from "@volley/targets";
import { importHar } from "./import-har";

/**
 * The whole point of the import: the HAR a real Chromium session recorded against the chat app
 * (fixtures/record-har.ts) becomes a plan that runs against a fresh copy of that app and passes,
 * with nothing edited but the target's port and the schedule.
 */
const fixture = (name: string) => JSON.parse(readFileSync(path.resolve(import.meta.dirname, "../fixtures", name), "utf8")) as unknown;

const apps: TestApp<unknown>[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});

const total = (frames: EngineFrame[], counter: string) => frames.reduce((n, f) => n + (f.counters[counter] ?? 0), 0);

describe("the recorded chat HAR, imported and run", { timeout: 30_000 }, () => {
  it("logs in, connects with the token, joins, and every chat's own copy comes back matched by its id; the app counts the same", async () => {
    const app = await startSocketioChat();
    apps.push(app);
    const { plan } = importHar(fixture("socketio-chat.har"), { targetUrl: app.url, connections: 4, rate: 5, duration: "2s" });
    const frames: EngineFrame[] = [];
    const outcome = await runShard(planSchema.parse(plan), { startAt: Date.now() + 20, onFrame: (f) => frames.push(f) });
    expect(outcome.status, outcome.error).toBe("completed");

    const stats = app.stats();
    const sent = total(frames, COUNTERS.sent);
    expect(sent).toBeGreaterThanOrEqual(4 * 9);
    expect(stats.logins).toBe(4);
    expect(stats.connections).toBe(4);
    expect(stats.authFailures).toBe(0);
    expect(stats.joins).toBe(4);
    // Every chat the plan sent reached the app, and its own copy came back and was matched.
    expect(stats.chatsReceived).toBe(sent);
    expect(total(frames, COUNTERS.received)).toBe(sent);
    expect(total(frames, COUNTERS.lost)).toBe(0);
    // All four share the recorded room: the app hands each chat to every member present.
    expect(total(frames, "events.message")).toBeGreaterThanOrEqual(sent);
    expect(total(frames, "events.message")).toBeLessThanOrEqual(stats.messagesDelivered);
  });

  it("JSON-RPC over a raw WebSocket: each call's response is matched by its id; the server answered every call", async () => {
    const app = await startJsonRpcWs();
    apps.push(app);
    // Only the origin is given: the recorded path (/rpc) is kept.
    const { plan } = importHar(fixture("jsonrpc-ws.har"), { targetUrl: app.httpUrl, connections: 3, rate: 5, duration: "2s" });
    expect(plan.flow?.messages?.[0]).toMatchObject({
      json: { id: "{{ msg.id }}", method: "echo", params: { text: "ping {{ msg.number }}" } },
      reply: { match: { path: "$.id", equals: "{{ msg.id }}" } },
    });
    const frames: EngineFrame[] = [];
    const outcome = await runShard(planSchema.parse(plan), { startAt: Date.now() + 20, onFrame: (f) => frames.push(f) });
    expect(outcome.status, outcome.error).toBe("completed");
    const stats = app.stats();
    const sent = total(frames, COUNTERS.sent);
    expect(sent).toBeGreaterThanOrEqual(3 * 9);
    expect(stats).toEqual({ requests: sent, notifications: 0, responses: sent, errors: 0, refused: 0, rateLimited: 0 });
    expect(total(frames, COUNTERS.received)).toBe(sent);
    expect(total(frames, COUNTERS.lost)).toBe(0);
    expect(total(frames, COUNTERS.unmatched)).toBe(0);
  });

  it("MessagePack in binary frames: the recorded hello's bytes and every call reach the server, each reply matched by its decoded id", async () => {
    const app = await startMsgpackWs();
    apps.push(app);
    const { plan } = importHar(fixture("msgpack-ws.har"), { targetUrl: app.httpUrl, connections: 3, rate: 5, duration: "2s" });
    const frames: EngineFrame[] = [];
    const outcome = await runShard(planSchema.parse(plan), { startAt: Date.now() + 20, onFrame: (f) => frames.push(f) });
    expect(outcome.status, outcome.error).toBe("completed");
    const sent = total(frames, COUNTERS.sent);
    expect(sent).toBeGreaterThanOrEqual(3 * 9);
    // Per connection the recorded frame of the app's own codec (malformed to this server) and one echo; then the calls.
    expect(app.stats()).toEqual({ requests: sent + 3, replies: sent + 3, malformed: 3, textFrames: 0 });
    expect(total(frames, COUNTERS.received)).toBe(sent);
    expect(total(frames, COUNTERS.lost)).toBe(0);
    expect(total(frames, COUNTERS.unmatched)).toBe(0);
  });

  it("a login on another origin than the socket: each connection logs in there and connects with its own token, the recorded one never sent", async () => {
    const app = await startWsShop({ loginPort: 0 });
    apps.push(app);
    const har = fixture("ws-shop-sso.har") as { log: { entries: { request: { method: string; url: string } }[] } };
    const login = har.log.entries.find((e) => e.request.method === "POST")!.request.url;
    const recordedToken = har.log.entries.find((e) => e.request.url.startsWith("ws"))!.request.url.split("token=")[1]!;
    const { plan, notes } = importHar(har, { targetUrl: app.url, origins: { [new URL(login).origin]: app.loginUrl }, connections: 3, rate: 5, duration: "2s" });
    expect(JSON.stringify(plan)).not.toContain(recordedToken);
    expect(plan.flow?.setup?.[0]).toMatchObject({ request: { method: "POST", url: `${app.loginUrl}/api/login`, capture: { token: "$.token" } } });
    expect(notes.join("\n")).toContain(`is on another origin than the socket`);
    const frames: EngineFrame[] = [];
    const outcome = await runShard(planSchema.parse(plan), { startAt: Date.now() + 20, onFrame: (f) => frames.push(f) });
    expect(outcome.status, outcome.error).toBe("completed");
    const sent = total(frames, COUNTERS.sent);
    expect(sent).toBeGreaterThanOrEqual(3 * 9);
    // One login per connection at the auth service, each socket admitted with the token it got there.
    expect(app.stats()).toEqual({ logins: 3, badTokens: 0, connections: 3, ordersCreated: sent, ordersCancelled: 0, errors: 0, drops: 0 });
    expect(total(frames, COUNTERS.received)).toBe(sent);
    expect(total(frames, COUNTERS.lost)).toBe(0);
  });
});
