import { z } from "zod";
import { durationSchema } from "./duration";
import { binaryLiteralSchema, bodyCodecSchema } from "./flow-codec";
import { jsonTemplate } from "./json-template";
import { reconnectSchema } from "./reconnect";
import { MAX_HTTP_BODY_LENGTH, MAX_NAME_LENGTH, MAX_SECRET_LENGTH, MAX_URL_LENGTH, protocolSchema } from "./target";

/**
 * The plan's `flow`: how to talk to the user's real application instead of an echo of Volley's own
 * opaque messages. Absent, every plan runs exactly as before.
 *
 * - `setup`: steps each connection takes before its open-loop phase — HTTP requests (log in, make a
 *   session) with captures, the connect itself (headers, query, Socket.IO `auth` built from
 *   captures), sends, waits for an event, think times. Each step is timed as `setup.<name>` and a
 *   failed step fails the connection with `errors.setup.<name>`, never mixed into message latency.
 * - `messages`: what the open-loop phase sends (by weight) and which incoming message is each
 *   one's reply. The schedule (rate, arrival, sweep) is the scenario's, and every message is still
 *   timed from its intended send time.
 * - `data`: rows that feed connections (`{{ data.<column> }}`), one row per connection.
 *
 * Templates and their variables: see flow-template.ts. Validation (flow-validation.ts) checks
 * variables, captures, paths and protocol fit, naming the field and the fix.
 */

const name = z.string().regex(/^[A-Za-z0-9_-]{1,60}$/, "use 1 to 60 letters, digits, _ or -, like login");
const text = (max = MAX_SECRET_LENGTH) => z.string().max(max, `must be at most ${max} characters`);
const headers = z.record(z.string().max(MAX_NAME_LENGTH), text()).refine((h) => Object.keys(h).length <= 50, "at most 50 headers");

/** Where a captured value comes from: a JSON path into the body (the short form), a header or a cookie. */
export const captureSourceSchema = z.union(
  [
    z.string().startsWith("$", 'a capture is a JSON path like "$.token", or { header: "x-session" }, or { cookie: "sid" }'),
    z.strictObject({
      json: z.string().startsWith("$", "must be a JSON path like $.token"),
      /**
       * `random`: the value there is a list, and the capture is one of its items, drawn evenly for
       * each capture (Artillery's `$[{{ $randomNumber(0, 149) }}]`, k6's randomItem); a value that
       * is not a list, or an empty one, finds nothing.
       */
      pick: z.literal("random", { error: 'pick is "random" (one item of the list at json, drawn evenly)' }).optional(),
    }),
    z.strictObject({ header: z.string().min(1).max(MAX_NAME_LENGTH) }),
    z.strictObject({ cookie: z.string().min(1).max(MAX_NAME_LENGTH) }),
  ],
  { error: 'a capture is a JSON path like "$.token", or { header: "x-session" }, or { cookie: "sid" }' },
);
export type CaptureSource = z.output<typeof captureSourceSchema>;
const captures = z.record(z.string().regex(/^[A-Za-z_][\w-]{0,59}$/, "a capture name is a letter or _ then letters, digits, _ or -"), captureSourceSchema);

/** An incoming message is this one when its event matches and, with `path`, the value there equals `equals`. */
export const matchSchema = z.strictObject({
  /** A JSON path into the message (Socket.IO: into its first argument; all arguments when several). */
  path: z.string().startsWith("$", "must be a JSON path like $.clientMsgId"),
  /** The value it must equal, a template (absent: the path only has to exist). */
  equals: text(MAX_NAME_LENGTH * 5).optional(),
});
export type Match = z.output<typeof matchSchema>;

export const httpRequestSchema = z.strictObject({
  /** Names the step in metrics (setup.<name>) and errors; absent: request-<position>. */
  name: name.optional(),
  method: z.enum(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"]).default("GET"),
  /** Absolute, or relative to target.url (ws:// becomes http://). */
  url: text(MAX_URL_LENGTH).min(1),
  headers: headers.optional(),
  /** A JSON body (sent with content-type application/json). */
  json: jsonTemplate.optional(),
  /** A text body. */
  body: text(MAX_HTTP_BODY_LENGTH).optional(),
  capture: captures.optional(),
  /** The statuses that count as success (default: any 2xx; `any`: every answer, as Artillery and Locust count them). */
  expect: z
    .strictObject({
      status: z.union([z.number().int().min(100).max(599), z.array(z.number().int().min(100).max(599)).min(1), z.literal("any")], {
        error: "status is a status (201), a list of them ([200, 204]) or any",
      }),
    })
    .optional(),
});
export type HttpRequest = z.output<typeof httpRequestSchema>;

/** What one message carries; which fields apply depends on the protocol (flow-validation.ts). */
const outgoing = {
  /** Socket.IO and SocketCluster: the event; STOMP: the destination; MQTT: the topic published to (absent: target.mqtt.topic). */
  event: text(MAX_NAME_LENGTH).min(1).optional(),
  /** A JSON body: an object on Socket.IO and SocketCluster, a text frame of JSON elsewhere. */
  json: jsonTemplate.optional(),
  /** A text body. */
  text: text(MAX_HTTP_BODY_LENGTH).optional(),
  /** Bytes sent as they are, in a binary frame (ws) or attachment (Socket.IO): { base64 } or { hex }. */
  binary: binaryLiteralSchema.optional(),
  /** How `json` is encoded (and the reply decoded): json, text, msgpack or { protobuf }; absent: flow.codec (see flow-codec.ts). */
  codec: bodyCodecSchema.optional(),
  /** Socket.IO: further arguments after the body. */
  args: z.array(jsonTemplate).max(10).optional(),
  /** STOMP: extra frame headers. */
  headers: headers.optional(),
  /** MQTT: this message's quality of service (0, 1 or 2); absent: target.mqtt.qos. */
  qos: z
    .union([z.literal(0), z.literal(1), z.literal(2)], { error: "use 0 (at most once), 1 (at least once) or 2 (exactly once)" })
    .optional()
    .describe("MQTT: this message's quality of service, 0 at most once, 1 at least once, 2 exactly once; absent: target.mqtt.qos."),
};

export const sendStepSchema = z.strictObject({
  name: name.optional(),
  ...outgoing,
  /** Socket.IO / SocketCluster: wait for the acknowledgement (its data can be captured). */
  ack: z.boolean().default(false),
  capture: captures.optional(),
  timeout: durationSchema.default("10s"),
});

export const waitForStepSchema = z.strictObject({
  name: name.optional(),
  /** The event (Socket.IO, SocketCluster), destination (STOMP), topic filter (MQTT, + and # allowed) or SSE event type; absent: any message. */
  event: text(MAX_NAME_LENGTH).min(1).optional(),
  match: matchSchema.optional(),
  timeout: durationSchema.default("10s"),
  capture: captures.optional(),
  /** How the awaited message is decoded (protobuf: as replyType, else type); absent: flow.codec. */
  codec: bodyCodecSchema.optional(),
});

export const connectStepSchema = z.strictObject({
  name: name.optional(),
  /** Added to target.headers (templates allowed). */
  headers: headers.optional(),
  /** Query parameters added to target.url. */
  query: z.record(z.string().max(MAX_NAME_LENGTH), text()).optional(),
  /** Socket.IO: the handshake's `auth` payload, like { token: "{{ vars.token }}" }. */
  auth: jsonTemplate.optional(),
});

export const setupStepSchema = z.union(
  [
    z.strictObject({ request: httpRequestSchema }),
    z.strictObject({ connect: connectStepSchema }),
    z.strictObject({ send: sendStepSchema }),
    z.strictObject({ waitFor: waitForStepSchema }),
    z.strictObject({ think: durationSchema }),
  ],
  { error: "a setup step is one of { request: {…} }, { connect: {…} }, { send: {…} }, { waitFor: {…} } or { think: 1s }" },
);
export type SetupStep = z.output<typeof setupStepSchema>;

/**
 * Which incoming message answers a message: the acknowledgement (`ack: true`), or the next message
 * of `event` that satisfies `match` — with `match.equals: "{{ msg.id }}"` the exact message
 * (replies may come in any order, and broadcasts are matched on every receiver), without it the
 * oldest message still awaiting a reply (a server that answers in order).
 */
export const replySchema = z.strictObject({
  ack: z.boolean().optional(),
  /** Where the reply arrives: the event, STOMP destination or MQTT topic filter (subscribed when the connection opens). */
  event: text(MAX_NAME_LENGTH).min(1).optional(),
  match: matchSchema.optional(),
});
export type Reply = z.output<typeof replySchema>;

export const flowMessageSchema = z.strictObject({
  /** Names the kind in per-event counts; absent: message-<position>. */
  name: name.optional(),
  /** Relative share of the sends (default 1). */
  weight: z.number().positive().max(1_000_000).default(1),
  ...outgoing,
  /** SSE, polling and HTTP: messages are published by this request (its response is not the reply). */
  request: httpRequestSchema.omit({ capture: true }).optional(),
  /** How the reply is recognised; false: none is awaited (fire and forget: counted as sent only). */
  reply: z.union([z.literal(false), replySchema]).default({}),
});
export type FlowMessage = z.output<typeof flowMessageSchema>;

export const flowDataSchema = z.strictObject({
  /** Rows as objects: `[{ user: alice, password: x }, …]`. */
  rows: z
    .array(z.record(z.string().max(MAX_NAME_LENGTH), z.union([z.string().max(MAX_SECRET_LENGTH), z.number(), z.boolean()])))
    .max(100_000)
    .optional(),
  /** Or CSV text with a header line. */
  csv: text(MAX_HTTP_BODY_LENGTH * 2).optional(),
  /** Let connections share rows (row = connection index modulo rows); without it each connection needs its own row. */
  reuse: z.boolean().default(false),
});
export type FlowData = z.output<typeof flowDataSchema>;

/**
 * Messages the server sends on its own (tickers, presence): counted per event as every incoming
 * message is, and timed when the payload carries the server's send time at `timestamp` — the
 * receive time on the agent's clock minus that stamp, so it includes any offset between the two
 * clocks (exact only when they are synchronized; a stamp ahead of the agent's clock counts in
 * `push.clock_ahead` instead of a negative time).
 */
export const pushSchema = z.strictObject({
  /** The event (Socket.IO, SocketCluster), destination (STOMP) or SSE event type; absent: any unmatched message. */
  event: text(MAX_NAME_LENGTH).min(1).optional(),
  /** JSON path to the server's send time, like $.ts. */
  timestamp: z.string().startsWith("$", "must be a JSON path like $.ts"),
  /** The stamp's unit: epoch milliseconds (default), seconds or microseconds. */
  unit: z.enum(["ms", "s", "us"]).default("ms"),
});
export type Push = z.output<typeof pushSchema>;

/**
 * A think time: fixed (`2s`), uniform between `min` and `max`, or drawn around a `mean` (exponential,
 * or normal with `stddev`, never below 0). Each user draws its own.
 */
export const thinkSchema = z.union(
  [
    durationSchema,
    z.strictObject({ min: durationSchema, max: durationSchema }),
    z.strictObject({ mean: durationSchema, distribution: z.enum(["exponential", "normal"]), stddev: durationSchema.optional() }),
  ],
  { error: "a think time is a duration (2s), { min: 1s, max: 3s }, or { mean: 2s, distribution: exponential } (normal takes stddev too)" },
);
export type Think = z.output<typeof thinkSchema>;

/** A user's connection by name (user-connections.ts): letters, digits, _ or -. */
const connectionName = z.string().regex(/^[A-Za-z0-9_-]{1,60}$/, "name the connection with 1 to 60 letters, digits, _ or -, like feed");
/** Which connection a send, waitFor or disconnect uses; absent: the user's first connect's. */
const onConnection = connectionName
  .optional()
  .describe("The connection this step uses, as its connect step names it (connection: feed); absent: the connection of the user's first connect step.");

/**
 * A user's connect: as a setup connect, plus what to do when the server drops it, and with
 * `connection` one of several connections the user holds at once, each on its own protocol and URL.
 */
export const userConnectStepSchema = connectStepSchema.extend({
  reconnect: reconnectSchema.optional(),
  connection: connectionName
    .optional()
    .describe(
      "Names this connection, so a user holds several (an SSE feed and a WebSocket); steps name it to use it. Absent: the user's first (or only) connection, called main when it has no name.",
    ),
  protocol: protocolSchema.optional().describe("This connection's protocol; absent: target.protocol. Its options are the driver's defaults."),
  url: text(MAX_URL_LENGTH)
    .min(1)
    .optional()
    .describe("Where this connection goes: absolute, or relative to target.url (its scheme then follows the protocol: ws:// or http://); absent: target.url."),
});

/** A user's send: as a setup send, plus the reply it waits for (timed from the send's intended time, captured from). */
export const userSendStepSchema = sendStepSchema.extend({
  /** The incoming message that answers this one (event, match); the user waits for it up to `timeout`. */
  reply: replySchema.omit({ ack: true }).optional(),
  connection: onConnection,
});

/** A user's waitFor: as a setup waitFor, on the connection it names. */
export const userWaitForStepSchema = waitForStepSchema.extend({ connection: onConnection });

const conditionValue = z.union([z.string().max(MAX_NAME_LENGTH), z.number(), z.boolean()]);

/**
 * `{ if: { var: vars.order.status, equals: open }, steps: [...], else: [...] }`, and a loop's `while`.
 * At most one comparison (flow-validation.ts); none: the variable only has to be set. `above`,
 * `below`, `atLeast` and `atMost` compare numbers (a numeric string like "3" counts): a value that
 * is not a number makes the condition false.
 */
export const userConditionSchema = z.strictObject({
  /** A variable as in templates, without braces: vars.<capture>[.<field>…] or data.<column>. */
  var: z.string().regex(/^(vars|data)\.[A-Za-z_][\w-]*(\.[\w-]+)*$/, "name a variable like vars.order.status or data.plan"),
  equals: conditionValue.optional(),
  /** Holds when the value differs, or is not set. */
  notEquals: conditionValue.optional(),
  above: z.number().optional(),
  below: z.number().optional(),
  atLeast: z.number().optional(),
  atMost: z.number().optional(),
  /** A regular expression (JavaScript syntax) the value, as text, must match somewhere; anchor it with ^…$ for all of it. */
  matches: z.string().min(1).max(200).optional(),
  /** One of these values (compared as equals compares). */
  in: z.array(conditionValue).min(1).max(100).optional(),
});
export type UserCondition = z.output<typeof userConditionSchema>;

const MAX_USER_STEPS = 50;

/**
 * One step of a user's scenario (scenario kind `users`): the setup steps, plus the reply on a send,
 * random think times, loops, weighted choices, conditions and an explicit disconnect. Nested steps
 * are steps of the same kind.
 */
export const userStepSchema = z.union(
  [
    z.strictObject({ request: httpRequestSchema }),
    z.strictObject({ connect: userConnectStepSchema }),
    z.strictObject({ send: userSendStepSchema }),
    z.strictObject({ waitFor: userWaitForStepSchema }),
    z.strictObject({ think: thinkSchema }),
    z.strictObject({
      loop: z.strictObject({
        /** Names the loop in errors; absent: loop-<position>. */
        name: name.optional(),
        count: z.number().int().min(1).max(1_000_000).optional(),
        /** Repeat until this long has passed since the loop began (checked before each pass). */
        over: durationSchema.optional(),
        /** Repeat while this holds (checked before each pass); with count or over, whichever ends first. */
        while: userConditionSchema.optional(),
        get steps() {
          return z.array(userStepSchema).min(1, "a loop needs at least one step").max(MAX_USER_STEPS);
        },
      }),
    }),
    z.strictObject({
      get choice() {
        return z
          .array(
            z.strictObject({
              weight: z.number().positive("must be above 0: a branch with no weight is never taken (remove it instead)").max(1_000_000).default(1),
              get steps() {
                return z.array(userStepSchema).max(MAX_USER_STEPS);
              },
            }),
          )
          .min(1, "a choice needs at least one branch")
          .max(20);
      },
    }),
    z.strictObject({
      if: userConditionSchema,
      /** The steps taken when the condition holds. */
      get steps() {
        return z.array(userStepSchema).max(MAX_USER_STEPS);
      },
      get else() {
        return z.array(userStepSchema).max(MAX_USER_STEPS).optional();
      },
    }),
    /** true: the user's first connection; { connection }: the one named. */
    z.strictObject({ disconnect: z.union([z.literal(true), z.strictObject({ connection: connectionName })]) }),
  ],
  {
    error:
      "a user step is one of { request }, { connect }, { send }, { waitFor }, { think }, { loop: { count | over | while, steps } }, { choice: [{ weight, steps }] }, { if, steps, else } or { disconnect: true } ({ disconnect: { connection: feed } } for a named one)",
  },
);
export type UserStep = z.output<typeof userStepSchema>;

/**
 * The name a user's step is reported under (`step.<name>`, `errors.step.<name>`): its own, or its
 * kind and position — `send-3`, and inside loop 3 `send-3-1`, choice branch 2 of step 4 `send-4-2-1`,
 * an if's `send-5-then-1` / `send-5-else-1`. Null for steps that are not timed on their own.
 */
export function userStepName(step: UserStep, position: string): string | null {
  if ("request" in step) return step.request.name ?? `request-${position}`;
  if ("send" in step) return step.send.name ?? `send-${position}`;
  if ("waitFor" in step) return step.waitFor.name ?? `waitFor-${position}`;
  return null;
}

/** The position of step `i` (0-based) of a list at `where` (see userStepName). */
export const userStepPosition = (where: string, i: number) => (where ? `${where}-${i + 1}` : String(i + 1));

export const flowSchema = z.strictObject({
  data: flowDataSchema.optional(),
  /** The body codec of every message, send and reply that names none: json (default), text, msgpack or { protobuf } (flow-codec.ts). */
  codec: bodyCodecSchema.optional(),
  /**
   * Per connection, in order, before its open-loop phase. Without a connect step it connects after
   * the leading requests and think times, before the first send or waitFor (or after the last step).
   */
  setup: z.array(setupStepSchema).max(50).default([]),
  /** Scenario kind `users`: what each user does, in order, from its arrival until it leaves. */
  steps: z.array(userStepSchema).max(MAX_USER_STEPS).optional(),
  /**
   * Scenario kind `users`: HTTP requests made once per shard (once per agent a run is split over)
   * before its first user arrives, like Artillery's `before` and k6's setup(); what they capture is
   * every user's to read (`{{ vars.token }}`). A request that fails errors the shard naming it.
   */
  before: z
    .array(z.strictObject({ request: httpRequestSchema }))
    .min(1)
    .max(20)
    .optional(),
  /** Scenario kind `users`: HTTP requests made once per shard after its last user left (Artillery's `after`, k6's teardown()). */
  after: z
    .array(z.strictObject({ request: httpRequestSchema }))
    .min(1)
    .max(20)
    .optional(),
  /** What the open-loop phase sends; absent: Volley's own binary messages, echoed back. */
  messages: z.array(flowMessageSchema).min(1).max(20).optional(),
  /** Server push to time by the server's own timestamp (see pushSchema). */
  push: z.array(pushSchema).max(20).optional(),
  /** Incoming messages that answer nothing are counted per event; this many of each are kept as samples. */
  samples: z.number().int().min(0).max(20).default(5),
  /**
   * Set by the hub when it splits a run across agents: the run-wide index of this shard's first
   * connection (conn.index) and of its first data row. Leave it out of plans.
   */
  indexBase: z.number().int().min(0).optional(),
});
export type Flow = z.output<typeof flowSchema>;
export type FlowInput = z.input<typeof flowSchema>;
