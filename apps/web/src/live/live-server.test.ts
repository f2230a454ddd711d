import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pino } from "pino";
import { io as connectClient, type Socket } from "socket.io-client";
import { LIVE_FEED, type Plan } from "@volley/contracts";
import { createApiToken, DEFAULT_ORG_ID, insertRun, revokeApiToken } from "@volley/db";
import { BASE, signUp, startApiTestEnv, type ApiTestEnv } from "@/server/test-support/api-test-env";
import { attachLiveFeed, LIVE_RECHECK_MS, type LiveFeedServer, type SubscribeReply } from "./live-server";

// The live feed on a real HTTP server, reached by a real Socket.IO client, authenticated like the API.

let env: ApiTestEnv;
let http: HttpServer;
let live: LiveFeedServer;
let base = "";
let runId = "";
const tokens = { read: "", runOnly: "", both: "" };
const clients: Socket[] = [];

const plan: Plan = {
  name: "live feed test",
  target: { url: "ws://127.0.0.1:9001/echo", protocol: "ws", connectTimeout: "10s" },
  connections: { count: 1, rate: 10 },
  scenario: { kind: "echo", message: { bytes: 64, rate: 5, per: "connection", arrival: "constant", timeout: "10s" }, duration: "3s", warmup: "1s" },
  thresholds: [],
  agents: { pool: "default", count: 1 },
};

beforeAll(async () => {
  env = await startApiTestEnv();
  const make = async (scopes: ("read" | "run")[]) =>
    (await createApiToken(env.h.db, { orgId: DEFAULT_ORG_ID, name: `live-${scopes.join("-")}`, scopes })).secret;
  tokens.read = await make(["read"]);
  tokens.runOnly = await make(["run"]);
  tokens.both = await make(["read", "run"]);
  runId = (await insertRun(env.h.db, { plan })).id;
  http = createServer();
  // Without Redis: the hub's emits are not under test here, who may receive them is.
  live = attachLiveFeed(http, { redisUrl: null, log: pino({ level: "silent" }) });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const c of clients) c.close();
  await live?.close();
  await env?.close();
});

/** Connects with `Authorization: Bearer <token>`; resolves with the socket, or the connect_error. */
function connect(
  token: string,
  headers: Record<string, string> = { authorization: `Bearer ${token}` },
): Promise<{ socket: Socket } | { error: Error & { data?: unknown } }> {
  const socket = connectClient(`${base}${LIVE_FEED.namespace}`, {
    transports: ["websocket"],
    reconnection: false,
    timeout: 5000,
    extraHeaders: headers,
  });
  clients.push(socket);
  return new Promise((resolve) => {
    socket.once("connect", () => resolve({ socket }));
    socket.once("connect_error", (error) => resolve({ error }));
  });
}

describe("live feed authorization", () => {
  it("refuses an API token without the read scope, naming the scope, in the API's error shape", async () => {
    const r = await connect(tokens.runOnly);
    expect("error" in r).toBe(true);
    if (!("error" in r)) return;
    expect(r.error.message).toBe('this API token lacks the "read" scope (runs:read); create a token with it under Settings → API tokens');
    expect(r.error.data).toEqual({ error: { code: "forbidden", message: r.error.message } });
  });

  it("refuses an unknown token as unauthenticated", async () => {
    const r = await connect("vly_not-a-token");
    expect("error" in r && r.error.message).toMatch(/^the API token is unknown or revoked/);
  });

  it("streams a run's updates to tokens with the read scope", async () => {
    for (const token of [tokens.read, tokens.both]) {
      const r = await connect(token);
      if (!("socket" in r)) throw r.error;
      const reply = (await r.socket.timeout(5000).emitWithAck(LIVE_FEED.events.subscribe, { runId })) as SubscribeReply;
      expect(reply).toEqual({ ok: true });
      const got = new Promise((resolve) => r.socket.once(LIVE_FEED.events.status, resolve));
      live.io.of(LIVE_FEED.namespace).to(LIVE_FEED.room(runId)).emit(LIVE_FEED.events.status, { runId, status: "running" });
      expect(await got).toEqual({ runId, status: "running" });
      r.socket.close();
    }
  });
});

describe("live feed credentials are checked while the socket lives", () => {
  /** Resolves with the disconnect reason, or "still connected" after `ms`. */
  const disconnectWithin = (socket: Socket, ms: number) =>
    new Promise<string>((resolve) => {
      const t = setTimeout(() => resolve("still connected"), ms);
      socket.once("disconnect", (reason) => {
        clearTimeout(t);
        resolve(reason);
      });
    });

  it("closes the feed within 5 s of its API token being revoked; a live token's feed stays", async () => {
    const doomed = await createApiToken(env.h.db, { orgId: DEFAULT_ORG_ID, name: "live-doomed", scopes: ["read"] });
    const [a, b] = await Promise.all([connect(doomed.secret), connect(tokens.read)]);
    if (!("socket" in a)) throw a.error;
    if (!("socket" in b)) throw b.error;
    expect(await a.socket.timeout(5000).emitWithAck(LIVE_FEED.events.subscribe, { runId })).toEqual({ ok: true });
    const closed = disconnectWithin(a.socket, 5_000);
    const kept = disconnectWithin(b.socket, 3 * LIVE_RECHECK_MS);
    expect(await revokeApiToken(env.h.db, DEFAULT_ORG_ID, doomed.token.id)).toBe(true);
    expect(await closed).toBe("io server disconnect");
    expect(await kept).toBe("still connected");
    b.socket.close();
  });

  it("closes the feed within 5 s of its session signing out", async () => {
    const cookie = await signUp(`live-${Date.now()}@example.com`);
    const r = await connect("", { cookie });
    if (!("socket" in r)) throw r.error;
    const closed = disconnectWithin(r.socket, 5_000);
    const { POST } = await import("@/app/api/auth/[...all]/route");
    const out = await POST(new Request(`${BASE}/api/auth/sign-out`, { method: "POST", headers: { cookie, origin: BASE } }));
    expect(out.status).toBe(200);
    expect(await closed).toBe("io server disconnect");
  });
});
