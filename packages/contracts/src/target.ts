import { z } from "zod";
import { durationSchema } from "./duration";
import { templateNames } from "./flow-template";
import { jsonTemplate } from "./json-template";

/** Caps on a plan's text, so a plan stays a small document (see MAX_PLAN_BYTES in plan.ts). */
export const MAX_URL_LENGTH = 2048;
/** Names, events, destinations, header names, logins. */
export const MAX_NAME_LENGTH = 200;
/** Header values and passcodes (room for a bearer token or a signed cookie). */
export const MAX_SECRET_LENGTH = 8192;
/** target.http.body. */
export const MAX_HTTP_BODY_LENGTH = 262_144;

const capped = (max = MAX_NAME_LENGTH) => z.string().max(max, `must be at most ${max} characters`);

/**
 * The plan's `target`: where load goes, the protocol spoken, and that protocol's options. Each
 * options block is only valid on a target of its protocol (checked below, naming the field).
 */
export const protocolSchema = z.enum(["ws", "socketio", "sockjs", "stomp", "sse", "long-polling", "short-polling", "http", "socketcluster", "mqtt"]);
export type Protocol = z.infer<typeof protocolSchema>;

/** Raw WebSocket options; only valid on a target with protocol "ws". */
export const wsOptionsSchema = z.strictObject({
  /** Subprotocols offered in Sec-WebSocket-Protocol; the server must pick one of them. */
  subprotocols: z
    .array(capped().regex(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/, "a subprotocol is one token, like chat.v1"))
    .min(1)
    .max(20)
    .optional(),
  /** Offer permessage-deflate (RFC 7692); the server decides whether it is used. */
  perMessageDeflate: z.boolean().default(false),
  /** binary: messages as binary frames; text: as text frames carrying base64 (servers that only speak text). */
  frames: z.enum(["binary", "text"]).default("binary"),
});
export type WsOptions = z.output<typeof wsOptionsSchema>;

/** Socket.IO 2's client keeps these event names for itself: an emit on one never reaches the server. */
export const SOCKETIO_V2_RESERVED_EVENTS: ReadonlySet<string> = new Set([
  "connect",
  "connect_error",
  "connect_timeout",
  "connecting",
  "disconnect",
  "error",
  "reconnect",
  "reconnect_attempt",
  "reconnect_failed",
  "reconnect_error",
  "reconnecting",
  "ping",
  "pong",
]);

/**
 * Why a Socket.IO 2 app cannot use a reserved event name, and what it must do: the v2 client fires
 * its own connection events under these names, so an emit on one is swallowed and a listener on one
 * hears the client, not the server.
 */
export function socketioV2ReservedProblem(event: string): string {
  return (
    `"${event}" is reserved by the Socket.IO 2 client and never reaches the server: the v2 client uses ${[...SOCKETIO_V2_RESERVED_EVENTS].map((e) => `"${e}"`).join(", ")} ` +
    `for its own connection events, so an app can neither emit them nor listen for them from the server. ` +
    `Rename the event in the server and in the plan to one of the app's own, like "chat:${event}"`
  );
}

/** Socket.IO options; only valid on a target with protocol "socketio". */
export const socketioOptionsSchema = z.strictObject({
  /** Engine.IO transports to try, in order; the default lets the client upgrade from polling to websocket. */
  transports: z
    .array(z.enum(["websocket", "polling"]))
    .min(1)
    .default(["polling", "websocket"]),
  /** The server's Engine.IO path. */
  path: capped(MAX_URL_LENGTH).startsWith("/", "must start with /, like /socket.io").default("/socket.io"),
  /** Namespace to join; replaces the path of target.url, which names the namespace when this is absent. */
  namespace: capped().startsWith("/", "must start with /, like /chat").optional(),
  /** Event the message is emitted on (and, without ack, the event the reply comes back on). */
  event: capped().min(1).default("echo"),
  /** True: the server's acknowledgement carries the reply; false: the reply comes back as an event. */
  ack: z.boolean().default(false),
  /** The server's major version: 2 speaks Engine.IO 3 (socket.io-client 2); 3 and 4 share the v4 client. */
  version: z.union([z.literal(2), z.literal(3), z.literal(4)], { error: "use 2, 3 or 4 (the server's Socket.IO major version)" }).default(4),
  /**
   * The server's packet parser: `default` (Socket.IO's own), or `msgpack` for a server created with
   * `parser: require("socket.io-msgpack-parser")` (every packet one MessagePack binary frame).
   * Both ends must use the same one: a server on the other never completes the connect.
   */
  parser: z.enum(["default", "msgpack"], { error: 'use "default" (Socket.IO\'s own parser) or "msgpack" (socket.io-msgpack-parser)' }).default("default"),
});
export type SocketioOptions = z.output<typeof socketioOptionsSchema>;

const sockjsTransport = z.enum(["websocket", "xhr-streaming", "xhr-polling", "eventsource"]);

/** SockJS options; only valid on a target with protocol "sockjs". */
export const sockjsOptionsSchema = z.strictObject({
  /** Transports the client may use, in order of preference. */
  transports: z.array(sockjsTransport).min(1).default(["websocket", "xhr-streaming", "xhr-polling"]),
  /**
   * How messages travel in SockJS's text frames. `text`: as the application's own text (a flow's
   * JSON or text messages, its replies read as they arrive), the default with a flow. `base64`:
   * Volley's own binary messages encoded as base64, for Volley's reference echo (apps/targets), the
   * default without a flow. Absent: chosen by whether the plan has a flow.
   */
  encoding: z.enum(["text", "base64"]).optional(),
});
export type SockjsOptions = z.output<typeof sockjsOptionsSchema>;

const stompDestination = capped().min(1).startsWith("/", "must start with /, like /queue/echo");

/**
 * STOMP 1.2 options; only valid on a target with protocol "stomp". A ws(s):// URL is a STOMP
 * WebSocket endpoint; an http(s):// URL a SockJS one (Spring's `/ws` with SockJS enabled).
 */
export const stompOptionsSchema = z.strictObject({
  /** Where each message is SENT; the reference broker echoes it to the sender's reply-to destination. */
  destination: stompDestination.default("/queue/echo"),
  /**
   * The destination the connection SUBSCRIBEs to for replies and names in `reply-to`; absent, a
   * private /queue/volley-<random> per connection.
   */
  replyTo: stompDestination.optional(),
  /** Room destination for broadcast and group scenarios; `{room}` is replaced by the room name. */
  roomDestination: stompDestination.includes("{room}", { message: "must contain {room}, like /topic/{room}" }).default("/topic/{room}"),
  /** CONNECT's `host` header (the broker's virtual host); absent, the URL's host name. */
  host: capped().min(1).optional(),
  login: capped().optional(),
  passcode: capped(MAX_SECRET_LENGTH).optional(),
  /** Heart-beats we send and ask for, in ms; 0 turns one direction off (STOMP `heart-beat` header). */
  heartbeat: z
    .strictObject({
      outgoing: z.number().int().min(0).max(3_600_000).default(10_000),
      incoming: z.number().int().min(0).max(3_600_000).default(10_000),
    })
    .default({ outgoing: 10_000, incoming: 10_000 }),
  /** Ask for a RECEIPT on SUBSCRIBE and count the connection open only once it arrives. */
  receipt: z.boolean().default(true),
  /**
   * binary: Volley's messages as binary bodies; text: as base64 text bodies (text/plain), for
   * brokers that carry text WebSocket frames only (RabbitMQ Web-STOMP by default, where binary
   * bodies close every connection with "invalid UTF-8"). Flows send their own bodies and ignore it.
   */
  bodies: z.enum(["binary", "text"]).default("binary"),
  /**
   * An http(s):// SockJS endpoint: the SockJS transports the client may use, in order of
   * preference (default websocket, xhr-streaming, xhr-polling). SockJS carries text only, so
   * Volley's own messages travel as base64 text bodies there whatever `bodies` says.
   */
  transports: z.array(sockjsTransport).min(1).optional(),
});
export type StompOptions = z.output<typeof stompOptionsSchema>;

/** The template variables an MQTT client id or topic may use: made where connections are made, not per message. */
const MQTT_NAMES = /^(conn\.room|random\.(int|uuid|hex))$/;

/** An MQTT option that is a template (`{{ conn.room }}`, `{{ random.hex }}`), checked naming the problem. */
const mqttTemplate = (what: string, max = MAX_NAME_LENGTH) =>
  capped(max)
    .min(1)
    .superRefine((text, ctx) => {
      const { names, problems } = templateNames(text);
      for (const message of problems) ctx.addIssue({ code: "custom", message });
      for (const n of names)
        if (!MQTT_NAMES.test(n))
          ctx.addIssue({
            code: "custom",
            message: `{{ ${n} }} is not known when an MQTT connection is made: a ${what} may use conn.room, random.hex, random.uuid or random.int`,
          });
    });

/** A topic Volley publishes to: MQTT refuses wildcards in a published topic, and $ topics are the broker's own ($SYS). */
const mqttTopic = (example: string) =>
  mqttTemplate("topic")
    .refine((t) => !t.includes("+") && !t.includes("#"), `a published topic has no wildcards (+ or #): name one topic, like ${example}`)
    .refine((t) => !t.startsWith("$"), `topics starting with $ are the broker's own ($SYS): name your own, like ${example}`);

/** MQTT 3.1.1 or 5 over WebSocket options; only valid on a target with protocol "mqtt". */
export const mqttOptionsSchema = z.strictObject({
  /** The MQTT protocol version the broker is spoken to in. */
  version: z.enum(["3.1.1", "5"], { error: 'use "3.1.1" or "5" (the MQTT version, as text)' }).default("3.1.1"),
  /** Quality of service of every publish and subscription: 0 at most once, 1 at least once (PUBACK), 2 exactly once (PUBREC/PUBREL/PUBCOMP). */
  qos: z.union([z.literal(0), z.literal(1), z.literal(2)], { error: "use 0 (at most once), 1 (at least once) or 2 (exactly once)" }).default(0),
  /**
   * The client identifier, one per connection: a broker ends the older session of a repeated id, so
   * make it unique per connection with {{ random.hex }} or {{ random.uuid }}. The default is 23
   * characters, the longest every MQTT 3.1.1 broker must accept.
   */
  clientId: mqttTemplate("client id").default("volley-{{ random.hex }}"),
  username: capped().optional(),
  password: capped(MAX_SECRET_LENGTH).optional(),
  /** Clean session (3.1.1) / clean start (5): true starts every connection without a stored session. */
  clean: z.boolean().default(true),
  /**
   * Echo and storm: the topic each connection subscribes to and publishes on, so the broker's
   * delivery back is the round trip; absent, `volley/<client id>`, one per connection. A topic
   * shared by several connections hands each of them the others' messages too.
   */
  topic: mqttTopic("volley/echo/{{ random.hex }}").optional(),
  /** Broadcast and groups: the room's topic, every member subscribes and publishes there. */
  roomTopic: mqttTopic("room/{{ conn.room }}")
    .refine((t) => /\{\{\s*conn\.room\s*\}\}/.test(t), "must contain {{ conn.room }}, like room/{{ conn.room }}")
    .default("volley/rooms/{{ conn.room }}"),
  /**
   * Publish with the retain flag: the broker keeps each topic's last message for later
   * subscribers. A retained copy handed to a connection when it subscribes was not sent to it
   * live and is not counted as a reply or a delivery.
   */
  retain: z.boolean().default(false),
});
export type MqttOptions = z.output<typeof mqttOptionsSchema>;

/** SSE + HTTP POST options; only valid on a target with protocol "sse". */
export const sseOptionsSchema = z.strictObject({
  /** Where messages are POSTed, resolved against target.url; the stream's first event names the session. */
  publish: capped(MAX_URL_LENGTH).min(1).default("sse/send"),
});
export type SseOptions = z.output<typeof sseOptionsSchema>;

const jsonPath = (example: string) => z.string().startsWith("$", `must be a JSON path like ${example}`);

/**
 * Flows: the application's own poll request, sent by every connection in a loop (long polling: again
 * as soon as one is answered; short polling: `interval` after). Templates as in a flow's request
 * steps ({{ conn.index }}, {{ data.x }}, {{ vars.x }} from setup captures and from this poll's own
 * `capture`, so a cursor moves on), without msg.* (a poll belongs to no message). Each message it
 * answers with is an incoming message of the flow (no event), matched to replies like any other.
 *
 *     poll: { url: "/chat/poll?sessionId={{ vars.sessionId }}&cursor={{ vars.cursor }}&wait=20000",
 *             items: "$.messages", capture: { cursor: "$.cursor" } }
 */
export const pollRequestSchema = z.strictObject({
  method: z.enum(["GET", "POST", "PUT", "PATCH", "DELETE"]).default("GET"),
  /** Absolute (on target.url's origin) or relative to target.url. */
  url: capped(MAX_URL_LENGTH).min(1),
  /** Added to target.headers and the connect step's headers. */
  headers: z
    .record(capped(), capped(MAX_SECRET_LENGTH))
    .refine((h) => Object.keys(h).length <= 50, "at most 50 headers")
    .optional(),
  /** A JSON body (content-type application/json). */
  json: jsonTemplate.optional(),
  /** A text body. */
  body: capped(MAX_HTTP_BODY_LENGTH).optional(),
  /** JSON path to the array of messages in an answer; absent: the whole answer is one message (an empty answer none). */
  items: jsonPath("$.messages").optional(),
  /** Values read from every answer into {{ vars.<name> }} for the next poll (a value an answer lacks is kept). */
  capture: z
    .record(capped(60).regex(/^[A-Za-z_][\w-]{0,59}$/, "a capture name is a letter or _ then letters, digits, _ or -"), jsonPath("$.cursor"))
    .optional(),
});
export type PollRequest = z.output<typeof pollRequestSchema>;

/** HTTP long- and short-polling options; only valid with protocol "long-polling" or "short-polling". */
export const pollingOptionsSchema = z.strictObject({
  /** short-polling: time between the end of one poll and the next. */
  interval: durationSchema.default("1s"),
  /** long-polling: how long the server may hold an empty poll before answering (Volley's reference routes; a flow's poll says it in its own URL). */
  wait: durationSchema.default("20s"),
  /** Flows (required there, refused without one): the application's own poll request. */
  poll: pollRequestSchema.optional(),
});
export type PollingOptions = z.output<typeof pollingOptionsSchema>;

/** Whether requests of this method carry a body: the http driver sends none with GET, HEAD or DELETE. */
export function httpMethodCarriesBody(method: string): boolean {
  return method !== "GET" && method !== "HEAD" && method !== "DELETE";
}

/** Plain HTTP request/response options; only valid on a target with protocol "http". */
export const httpOptionsSchema = z
  .strictObject({
    /**
     * Absent: GET, or POST when `body` is given — what ab, wrk, k6 and curl do, so a plan written
     * from their habits does not POST to a server that only answers GET (405 to every request).
     */
    method: z.enum(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"]).optional(),
    /**
     * The request body (POST, PUT, PATCH). A string: that text, for endpoints that expect their own
     * format. Absent with a method that carries a body: the message itself (64 bytes by default,
     * octet-stream), which an echo endpoint returns.
     */
    body: capped(MAX_HTTP_BODY_LENGTH).optional(),
    /** Requests one connection may have in flight on its socket (HTTP/1.1 pipelining); 1 is none. */
    pipelining: z.number().int().min(1).max(100).default(1),
    /**
     * false: every request on a new TCP connection (`Connection: close`, like `ab` without -k), to
     * measure a server's connection handling; true: each load connection keeps its socket.
     */
    keepAlive: z.boolean().default(true),
  })
  .superRefine((o, ctx) => {
    if (o.body !== undefined && o.method !== undefined && !httpMethodCarriesBody(o.method))
      ctx.addIssue({
        code: "custom",
        path: ["method"],
        message: `a ${o.method} carries no body: set method: POST (or leave method out: a body means POST), or remove body`,
      });
  })
  .transform((o) => ({ ...o, method: o.method ?? (o.body === undefined ? "GET" : "POST") }));
export type HttpOptions = z.output<typeof httpOptionsSchema>;

/** SocketCluster options; only valid on a target with protocol "socketcluster". */
export const socketclusterOptionsSchema = z.strictObject({
  /**
   * invoke: an RPC whose response is the reply; transmit: a one-way event answered by one;
   * publish: a channel message the connection itself is subscribed to.
   */
  mode: z.enum(["invoke", "transmit", "publish"]).default("invoke"),
  /** Procedure or event name (invoke, transmit). */
  event: capped().min(1).default("echo"),
  /** publish mode without a room: the channel; absent, a private volley-<random> per connection. */
  channel: capped().min(1).optional(),
  /** The server's WebSocket path. */
  path: capped(MAX_URL_LENGTH).startsWith("/", "must start with /, like /socketcluster/").default("/socketcluster/"),
});
export type SocketclusterOptions = z.output<typeof socketclusterOptionsSchema>;

/** The URL schemes each protocol connects with; the fix names an example URL of the reference targets. */
export const URL_SCHEMES: Record<Protocol, { schemes: string[]; example: string }> = {
  ws: { schemes: ["ws:", "wss:"], example: "ws://127.0.0.1:9001/echo" },
  socketio: { schemes: ["http:", "https:"], example: "http://127.0.0.1:9002" },
  sockjs: { schemes: ["http:", "https:"], example: "http://127.0.0.1:9003/echo" },
  stomp: { schemes: ["ws:", "wss:", "http:", "https:"], example: "ws://127.0.0.1:9004/stomp (a SockJS endpoint: http://127.0.0.1:9004/sockjs)" },
  sse: { schemes: ["http:", "https:"], example: "http://127.0.0.1:9005/sse" },
  "long-polling": { schemes: ["http:", "https:"], example: "http://127.0.0.1:9005/poll" },
  "short-polling": { schemes: ["http:", "https:"], example: "http://127.0.0.1:9005/poll" },
  http: { schemes: ["http:", "https:"], example: "http://127.0.0.1:9005/echo" },
  socketcluster: { schemes: ["ws:", "wss:"], example: "ws://127.0.0.1:9006/socketcluster/" },
  mqtt: { schemes: ["ws:", "wss:"], example: "ws://127.0.0.1:8080/mqtt" },
};

export function schemeFix(protocol: Protocol): string {
  const { schemes, example } = URL_SCHEMES[protocol];
  const names = schemes.map((s) => `${s}//`).join(" or ");
  return `use a URL starting with ${names} for protocol ${protocol}, like ${example}`;
}

/** Each options block and the protocols it belongs to. */
const PROTOCOL_OPTIONS = {
  ws: ["ws"],
  socketio: ["socketio"],
  sockjs: ["sockjs"],
  stomp: ["stomp"],
  sse: ["sse"],
  polling: ["long-polling", "short-polling"],
  http: ["http"],
  socketcluster: ["socketcluster"],
  mqtt: ["mqtt"],
} as const satisfies Record<string, readonly Protocol[]>;

export const targetSchema = z
  .strictObject({
    url: z
      .url({ protocol: /^(wss?|https?)$/, error: "must be an absolute ws://, wss://, http:// or https:// URL" })
      .max(MAX_URL_LENGTH, `must be at most ${MAX_URL_LENGTH} characters`),
    protocol: protocolSchema.default("ws"),
    headers: z
      .record(capped(), capped(MAX_SECRET_LENGTH))
      .refine((h) => Object.keys(h).length <= 50, "at most 50 headers")
      .optional(),
    /** How long one connection attempt may take before it counts as a timeout. */
    connectTimeout: durationSchema.default("10s"),
    ws: wsOptionsSchema.optional(),
    socketio: socketioOptionsSchema.optional(),
    sockjs: sockjsOptionsSchema.optional(),
    stomp: stompOptionsSchema.optional(),
    sse: sseOptionsSchema.optional(),
    polling: pollingOptionsSchema.optional(),
    http: httpOptionsSchema.optional(),
    socketcluster: socketclusterOptionsSchema.optional(),
    mqtt: mqttOptionsSchema.optional(),
  })
  .superRefine((target, ctx) => {
    const scheme = URL.canParse(target.url) ? new URL(target.url).protocol : "";
    if (scheme && !URL_SCHEMES[target.protocol].schemes.includes(scheme)) {
      ctx.addIssue({ code: "custom", path: ["url"], message: schemeFix(target.protocol) });
    }
    if (target.http && !target.http.keepAlive && target.http.pipelining > 1) {
      ctx.addIssue({
        code: "custom",
        path: ["http", "pipelining"],
        message: "pipelining needs a kept-alive connection: set pipelining: 1 with keepAlive: false, or keepAlive: true",
      });
    }
    // sockjs-client and ws throw on a fragment.
    if ((target.protocol === "sockjs" || target.protocol === "stomp") && URL.canParse(target.url) && new URL(target.url).hash)
      ctx.addIssue({
        code: "custom",
        path: ["url"],
        message: `a ${target.protocol === "sockjs" ? "SockJS" : "STOMP"} endpoint's URL takes no #fragment: remove it`,
      });
    if (target.stomp?.transports && (scheme === "ws:" || scheme === "wss:")) {
      ctx.addIssue({
        code: "custom",
        path: ["stomp", "transports"],
        message:
          "SockJS transports apply to an http(s):// SockJS endpoint, and this URL is a plain WebSocket one: remove transports, or give the endpoint's http(s):// URL",
      });
    }
    const io = target.socketio;
    if (io && io.version === 2 && io.parser === "msgpack") {
      ctx.addIssue({
        code: "custom",
        path: ["socketio", "parser"],
        message: "socket.io-msgpack-parser 3 speaks Socket.IO 3 and 4, not 2: set version to the server's (3 or 4), or remove parser for a Socket.IO 2 server",
      });
    }
    if (io && io.version === 2 && SOCKETIO_V2_RESERVED_EVENTS.has(io.event)) {
      ctx.addIssue({
        code: "custom",
        path: ["socketio", "event"],
        message: socketioV2ReservedProblem(io.event),
      });
    }
    for (const [key, protocols] of Object.entries(PROTOCOL_OPTIONS) as [keyof typeof PROTOCOL_OPTIONS, readonly Protocol[]][]) {
      if (target[key] === undefined || protocols.includes(target.protocol)) continue;
      const which = protocols.map((p) => `protocol: ${p}`).join(" or ");
      ctx.addIssue({
        code: "custom",
        path: [key],
        message: `only valid with ${which} (this target's protocol is ${target.protocol}); remove it or set ${which}`,
      });
    }
    const poll = target.polling?.poll;
    if (poll?.json !== undefined && poll.body !== undefined)
      ctx.addIssue({ code: "custom", path: ["polling", "poll", "body"], message: "give json or body, not both" });
    if (poll && (poll.json !== undefined || poll.body !== undefined) && poll.method === "GET") {
      ctx.addIssue({ code: "custom", path: ["polling", "poll", "method"], message: "a GET carries no body: set method: POST, or put the values in the URL" });
    }
  });
export type Target = z.output<typeof targetSchema>;
