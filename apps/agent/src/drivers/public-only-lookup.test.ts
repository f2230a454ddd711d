import type { LookupAddress } from "node:dns";
import type { LookupFunction } from "node:net";
import { describe, expect, it } from "vitest";
import { socketioOptionsSchema, sockjsOptionsSchema, stompOptionsSchema } from "@volley/contracts";
import { publicOnlyLookup, type ResolveAll } from "@volley/contracts/public-lookup";
import {
  HTTP_PATHS,
  startHttpTargetServer,
  startSocketclusterEchoServer,
  startSocketioEchoServer,
  startSockjsEchoServer,
  startStompEchoServer,
  startStompSockjsChat,
  startWsEchoServer,
  STOMP_CHAT_SEND,
  STOMP_CHAT_TOPIC,
} from "@volley/targets";
import type { ConnectOptions, Driver } from "./driver";
import { connectError, driverTestKit } from "./driver-test-kit";
import { httpDriver } from "./http-driver";
import { longPollingDriver } from "./polling-driver";
import { socketclusterDriver } from "./socketcluster-driver";
import { socketioDriver } from "./socketio-driver";
import { sockjsDriver } from "./sockjs-driver";
import { sseDriver } from "./sse-driver";
import { stompDriver } from "./stomp-driver";
import { wsDriver } from "./ws-driver";

// Hosted mode: every driver's sockets resolve the target through ConnectOptions.lookup, so the
// address checked is the address connected to. A name no DNS knows (.test) connects only through
// the lookup given — which shows the driver really uses it — and the public-only lookup refuses
// the same name when it answers 127.0.0.1 (a name re-pointed at loopback after the run was queued).

const kit = driverTestKit();
const NAME = "volley-target.test";

/** This name server's only answer: 127.0.0.1. */
const toLoopback: ResolveAll = (_host, cb) => setImmediate(() => cb(null, [{ address: "127.0.0.1", family: 4 } satisfies LookupAddress]));
/** Plain lookup that resolves NAME to loopback, no policy: proves the driver's sockets use ConnectOptions.lookup. */
const plain: LookupFunction = (_host, options, cb) => {
  if (options.all) return (cb as unknown as (e: null, a: LookupAddress[]) => void)(null, [{ address: "127.0.0.1", family: 4 }]);
  cb(null, "127.0.0.1", 4);
};

const renamed = (url: string) => url.replace("127.0.0.1", NAME);

const CASES: [string, Driver, () => Promise<{ url: string; close(): Promise<void> | void }>, Partial<ConnectOptions>][] = [
  ["ws", wsDriver, () => startWsEchoServer(), {}],
  ["stomp", stompDriver, () => startStompEchoServer(), {}],
  ["socketcluster", socketclusterDriver, () => startSocketclusterEchoServer(), {}],
  ["socket.io polling", socketioDriver, () => startSocketioEchoServer(), { socketio: socketioOptionsSchema.parse({ transports: ["polling"] }) }],
  ["socket.io websocket", socketioDriver, () => startSocketioEchoServer(), { socketio: socketioOptionsSchema.parse({ transports: ["websocket"] }) }],
  // SockJS opens several sockets per connection (the /info probe, then the transport; xhr ones POST each send).
  ["sockjs websocket", sockjsDriver, () => startSockjsEchoServer(), { sockjs: sockjsOptionsSchema.parse({ transports: ["websocket"] }) }],
  ["sockjs xhr-streaming", sockjsDriver, () => startSockjsEchoServer(), { sockjs: sockjsOptionsSchema.parse({ transports: ["xhr-streaming"] }) }],
  ["sockjs xhr-polling", sockjsDriver, () => startSockjsEchoServer(), { sockjs: sockjsOptionsSchema.parse({ transports: ["xhr-polling"] }) }],
  [
    "sse",
    sseDriver,
    async () => {
      const s = await startHttpTargetServer();
      return { url: `${s.url}${HTTP_PATHS.sse}`, close: () => s.close() };
    },
    {},
  ],
  [
    "long polling",
    longPollingDriver,
    async () => {
      const s = await startHttpTargetServer();
      return { url: `${s.url}/poll`, close: () => s.close() };
    },
    {},
  ],
  [
    "http",
    httpDriver,
    async () => {
      const s = await startHttpTargetServer();
      return { url: `${s.url}${HTTP_PATHS.echo}`, close: () => s.close() };
    },
    {},
  ],
];

describe("drivers resolve through ConnectOptions.lookup (hosted mode's public-only check)", () => {
  for (const [name, driver, start, extra] of CASES) {
    it(`${name}: connects through the given lookup; the public-only lookup refuses a name answering 127.0.0.1`, async () => {
      const server = await kit.serve(start());
      const url = renamed(server.url);
      expect(url).toContain(NAME);
      const conn = await kit.connect(driver, { url, lookup: plain, ...extra });
      conn.close();
      const err = await connectError(driver, { url, lookup: publicOnlyLookup(toLoopback), ...extra });
      expect(err.detail).toMatch(/volley-target\.test resolves to 127\.0\.0\.1 \(loopback\); hosted Volley only reaches public addresses/);
    });
  }
});

describe("sockjs under the public-only lookup", () => {
  for (const transport of ["websocket", "xhr-streaming", "xhr-polling"] as const) {
    it(`${transport}: every request of the connection (probe, transport, sends) goes through the lookup, and an echo comes back`, async () => {
      const server = await kit.serve(startSockjsEchoServer());
      const asked: string[] = [];
      const counting: LookupFunction = (host, options, cb) => {
        asked.push(host);
        plain(host, options, cb);
      };
      const conn = await kit.connect(sockjsDriver, {
        url: renamed(server.url),
        lookup: counting,
        sockjs: sockjsOptionsSchema.parse({ transports: [transport] }),
      });
      const reply = new Promise<Buffer | string>((resolve) => conn.onMessage(resolve));
      const before = asked.length;
      conn.send(Buffer.from("ping"));
      expect(String(await reply)).toBe("ping");
      conn.close();
      expect(asked.every((h) => h === NAME)).toBe(true);
      // The /info probe and the transport's own socket(s), at least.
      expect(before).toBeGreaterThanOrEqual(2);
    });
  }

  for (const transport of ["websocket", "xhr-streaming", "xhr-polling"] as const) {
    it(`STOMP over SockJS, ${transport}: CONNECT, SUBSCRIBE, a SEND, heart-beats and the DISCONNECT all through the lookup`, async () => {
      const app = await kit.serve(startStompSockjsChat({ heartbeatMs: 50 }));
      const asked: string[] = [];
      const counting: LookupFunction = (host, options, cb) => {
        asked.push(host);
        plain(host, options, cb);
      };
      const stomp = stompOptionsSchema.parse({ transports: [transport], heartbeat: { outgoing: 50, incoming: 0 } });
      const url = renamed(app.url);
      const conn = await kit.connect(stompDriver, { url, lookup: counting, stomp, listen: [STOMP_CHAT_TOPIC] });
      const before = asked.length;
      const reply = new Promise<unknown>((resolve) => conn.onEvent!((_e, data) => resolve(data)));
      // Heart-beats go out from stompjs's own timer, sends from the caller's: both outside the session's own callbacks.
      await expect.poll(() => app.stats().heartbeatsReceived, { timeout: 3000 }).toBeGreaterThanOrEqual(2);
      conn.emit!({ event: STOMP_CHAT_SEND, body: { content: "ping" }, json: true });
      expect(JSON.parse(String(await reply))).toMatchObject({ content: "ping" });
      conn.close();
      // A request outside the connection's lookup fails (sockjs-client-loader.ts): the DISCONNECT arriving shows it went through it.
      await expect.poll(() => app.stats().frames, { timeout: 3000 }).toBe(4);
      expect(asked.every((h) => h === NAME)).toBe(true);
      expect(before).toBeGreaterThanOrEqual(2);
      // The public-only lookup refuses the same name answering 127.0.0.1, at the /info probe already.
      const err = await connectError(stompDriver, { url, lookup: publicOnlyLookup(toLoopback), stomp });
      expect(err.detail).toMatch(/volley-target\.test resolves to 127\.0\.0\.1 \(loopback\); hosted Volley only reaches public addresses/);
    });
  }

  it("STOMP over SockJS: eventsource alone is refused in hosted mode, naming target.stomp.transports", async () => {
    const server = await kit.serve(startStompEchoServer());
    const err = await connectError(stompDriver, {
      url: renamed(server.sockjsUrl),
      lookup: plain,
      stomp: stompOptionsSchema.parse({ transports: ["eventsource"] }),
    });
    expect(err.detail).toMatch(
      /eventsource cannot be held to hosted Volley's public-address check: allow websocket, xhr-streaming or xhr-polling in target\.stomp\.transports/,
    );
  });

  it("eventsource, whose stream takes no lookup, is refused in hosted mode rather than resolved unchecked", async () => {
    const server = await kit.serve(startSockjsEchoServer());
    const err = await connectError(sockjsDriver, {
      url: renamed(server.url),
      lookup: plain,
      sockjs: sockjsOptionsSchema.parse({ transports: ["eventsource"] }),
    });
    expect(err.detail).toMatch(/SockJS transport eventsource cannot be held to hosted Volley's public-address check/);
  });
});
