import { z } from "zod";
import { durationSchema } from "./duration";

/**
 * The test plan: the one document users write (YAML or JSON), validated here and nowhere else.
 * Fields are added by later capabilities (more protocols, scenarios, sweeps); existing names never change.
 */
export const protocolSchema = z.enum(["ws", "socketio", "sockjs"]);
export type Protocol = z.infer<typeof protocolSchema>;

/** Socket.IO (v4 protocol) options; only valid on a target with protocol "socketio". */
export const socketioOptionsSchema = z.strictObject({
  /** Engine.IO transports to try, in order; the default lets the client upgrade from polling to websocket. */
  transports: z.array(z.enum(["websocket", "polling"])).min(1).default(["polling", "websocket"]),
  /** The server's Engine.IO path. */
  path: z.string().startsWith("/", "must start with /, like /socket.io").default("/socket.io"),
  /** Namespace to join; replaces the path of target.url, which names the namespace when this is absent. */
  namespace: z.string().startsWith("/", "must start with /, like /chat").optional(),
  /** Event the message is emitted on (and, without ack, the event the reply comes back on). */
  event: z.string().min(1).default("echo"),
  /** True: the server's acknowledgement carries the reply; false: the reply comes back as an event. */
  ack: z.boolean().default(false),
});
export type SocketioOptions = z.output<typeof socketioOptionsSchema>;

/** SockJS options; only valid on a target with protocol "sockjs". */
export const sockjsOptionsSchema = z.strictObject({
  /** Transports the client may use, in order of preference. */
  transports: z
    .array(z.enum(["websocket", "xhr-streaming", "xhr-polling", "eventsource"]))
    .min(1)
    .default(["websocket", "xhr-streaming", "xhr-polling"]),
});
export type SockjsOptions = z.output<typeof sockjsOptionsSchema>;

/** The URL schemes each protocol connects with: Socket.IO and SockJS start with plain HTTP. */
const URL_SCHEMES: Record<Protocol, { schemes: string[]; fix: string }> = {
  ws: { schemes: ["ws:", "wss:"], fix: "use a ws:// or wss:// URL for protocol ws" },
  socketio: { schemes: ["http:", "https:"], fix: "use an http:// or https:// URL for protocol socketio, like http://127.0.0.1:9002" },
  sockjs: { schemes: ["http:", "https:"], fix: "use an http:// or https:// URL for protocol sockjs, like http://127.0.0.1:9003/echo" },
};
const PROTOCOL_OPTIONS = ["socketio", "sockjs"] as const;

export const targetSchema = z
  .strictObject({
    url: z.url({ protocol: /^(wss?|https?)$/, error: "must be an absolute ws://, wss://, http:// or https:// URL" }),
    protocol: protocolSchema.default("ws"),
    headers: z.record(z.string(), z.string()).optional(),
    /** How long one connection attempt may take before it counts as a timeout. */
    connectTimeout: durationSchema.default("10s"),
    socketio: socketioOptionsSchema.optional(),
    sockjs: sockjsOptionsSchema.optional(),
  })
  .superRefine((target, ctx) => {
    const { schemes, fix } = URL_SCHEMES[target.protocol];
    const scheme = URL.canParse(target.url) ? new URL(target.url).protocol : "";
    if (scheme && !schemes.includes(scheme)) ctx.addIssue({ code: "custom", path: ["url"], message: fix });
    for (const key of PROTOCOL_OPTIONS) {
      if (target[key] !== undefined && target.protocol !== key) {
        ctx.addIssue({ code: "custom", path: [key], message: `only valid with protocol: ${key} (this target's protocol is ${target.protocol}); remove it or set protocol: ${key}` });
      }
    }
  });

export const connectionsSchema = z.strictObject({
  count: z.number().int().min(1).max(1_000_000),
  /** New connections opened per second while ramping up. */
  rate: z.number().positive().max(100_000).default(100),
});

export const messageSchema = z.strictObject({
  bytes: z.number().int().min(32, "must be at least 32: each message carries its id, sequence and intended send time").max(1_048_576).default(64),
  /** Messages per second, per connection or in aggregate (see `per`). */
  rate: z.number().positive().max(1_000_000),
  per: z.enum(["connection", "aggregate"]).default("connection"),
  arrival: z.enum(["constant", "poisson"]).default("constant"),
  /** A reply not received within this time counts as lost. */
  timeout: durationSchema.default("10s"),
});

export const echoScenarioSchema = z.strictObject({
  kind: z.literal("echo"),
  message: messageSchema,
  /**
   * How long each connection sends, from when it opened; the run lasts the ramp (count / rate)
   * plus this.
   */
  duration: durationSchema,
  /** Intervals starting within this time of the synchronized start are warm-up, left out of summaries. */
  warmup: durationSchema.default(0),
});

export const scenarioSchema = z.discriminatedUnion("kind", [echoScenarioSchema]);

export const agentsSchema = z.strictObject({
  pool: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "use lowercase letters, digits and dashes").default("default"),
  count: z.number().int().min(1).max(1000).default(1),
});

export const thresholdSchema = z
  .string()
  .regex(
    /^\s*[a-z][a-z0-9_.]*\s*(<=|>=|<|>|==)\s*\d+(\.\d+)?\s*(ms|s|%)?\s*$/,
    'write a threshold like "latency.p95 < 200ms" or "errors.rate < 1%"',
  );

export const planSchema = z.strictObject({
  name: z.string().min(1).max(200),
  target: targetSchema,
  connections: connectionsSchema,
  scenario: scenarioSchema,
  thresholds: z.array(thresholdSchema).max(50).default([]),
  agents: agentsSchema.default({ pool: "default", count: 1 }),
});

/** A plan as users write it (defaults optional). */
export type PlanInput = z.input<typeof planSchema>;
/** A plan after validation (defaults filled in). */
export type Plan = z.output<typeof planSchema>;
