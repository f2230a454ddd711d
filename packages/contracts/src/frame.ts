import { z } from "zod";

/**
 * Metric names are dotted; histogram values are microseconds (HdrHistogram, 3 significant digits),
 * encoded in the standard compressed base64 format.
 */
export const HISTOGRAMS = {
  /**
   * Round trip: receive time minus intended send time. A flow with several message kinds also
   * records each kind's own as `message.latency.<kind name>`.
   */
  messageLatency: "message.latency",
  /** Actual send time minus intended send time (shed slots: the lag at which the agent gave up on them). */
  sendLag: "message.send_lag",
  /**
   * Connect time, every protocol: from the attempt to the moment the connection can carry messages
   * (TCP + TLS + upgrade or handshake, and joining the room when there is one).
   */
  connect: "connect.time",
  /** The name connect time had before it was protocol-neutral: only old frames carry it; read it as `connect`. */
  wsConnect: "ws.connect",
  /** Broadcast and group delivery: a receiver's receive time minus the message's intended send time. */
  deliveryLatency: "delivery.latency",
  /** Connection open to its first message received (reply or delivery). */
  firstMessage: "message.first",
  /**
   * Flows: server push timed by the server's own timestamp (flow.push): receive time on the agent's
   * clock minus the stamp. Includes the clocks' offset; see pushSchema.
   */
  pushLatency: "push.latency",
  /** The storm scenario's canary connection: its round trips, apart from the crowd's. */
  canaryLatency: "canary.latency",
  /**
   * http-rps with `loop: closed`: receive time minus the moment the user was ready to send (its
   * previous reply plus think time). A response time, not a latency from an intended schedule: a
   * closed loop sends less when the server slows, so the waits it never made are in no sample
   * (coordinated omission). Never merged into message.latency.
   */
  closedLoopResponseTime: "closed_loop.response_time",
  /**
   * Plain HTTP: the TCP (+ TLS) connect of each socket a request went out on, from opening it to
   * connected. `keepAlive: false`: every request's own (ab's "Connect" row); keep-alive: a socket
   * reopened after the server closed the last one. `connect.time` stays the connection's first.
   */
  httpConnect: "http.connect",
  /**
   * Users: each user's time from its intended arrival to leaving (completed or failed). Each step
   * of theirs is `step.<name>`, from the step's intended instant to its end (a send with a reply:
   * to the reply).
   */
  userTime: "user.time",
  /** Users with a reconnect policy: from the server closing a connection to its reconnect, µs. */
  reconnectTime: "reconnect.time",
} as const;

/** Histograms that hold connect times: the neutral name and the one old frames carry. */
export const CONNECT_HISTOGRAMS: readonly string[] = [HISTOGRAMS.connect, HISTOGRAMS.wsConnect];

/** Counters are totals for the interval, except gauges (named in GAUGES) which are the value at its end. */
export const COUNTERS = {
  sent: "messages.sent",
  received: "messages.received",
  lost: "messages.lost",
  /**
   * Slots the agent gave up on unsent because it was too far behind (send lag past the shed limit,
   * 1 s or the message timeout if shorter): the agent, not the target, missed them. Expected counts
   * them, sent does not; their lag when given up is in `message.send_lag`.
   */
  shed: "messages.shed",
  /** A reply for a (connection, sequence) already answered: counted, not timed twice. */
  duplicated: "messages.duplicated",
  /** A reply older than one already received on the same connection. */
  outOfOrder: "messages.out_of_order",
  connectionsOpened: "connections.opened",
  connectionsFailed: "connections.failed",
  /** Every connection that ended, ours (end of run, falling stages) and the server's. */
  connectionsClosed: "connections.closed",
  /** Connections the server or the network ended (not us): what charts and stop conditions call disconnects. */
  connectionsDropped: "connections.dropped",
  connectionsActive: "connections.active",
  /**
   * Deliveries (broadcast, groups): one per (message, receiver). Expected and lost count only
   * messages sent from the same shard, where the sender's schedule is known exactly; deliveries
   * from other shards are counted in received (and `deliveries.remote`).
   */
  deliveriesExpected: "deliveries.expected",
  deliveriesReceived: "deliveries.received",
  deliveriesLost: "deliveries.lost",
  deliveriesDuplicated: "deliveries.duplicated",
  /**
   * Copies that reached a member which joined the room after the message was sent (the server had
   * it in the room by fan-out time): neither expected nor duplicates, counted apart and not timed.
   */
  deliveriesLateJoiner: "deliveries.late_joiner",
  deliveriesOutOfOrder: "deliveries.out_of_order",
  deliveriesRemote: "deliveries.remote",
  /**
   * Flows: incoming messages that answered no message of this shard (per event as
   * `unmatched.<event>`; every incoming message is counted per event as `events.<event>`).
   */
  unmatched: "messages.unmatched",
  /** Flows: server push messages recognised by flow.push (timed in push.latency). */
  pushReceived: "push.received",
  /** Flows: push stamps ahead of the agent's clock (not timed: the clocks disagree). */
  pushClockAhead: "push.clock_ahead",
  /** Users: arrivals that started their steps, finished them all, failed one (errors.step.<name>), or found every slot busy. */
  usersStarted: "users.started",
  usersCompleted: "users.completed",
  usersFailed: "users.failed",
  usersDropped: "users.dropped",
  /** Connections a user reopened after the server closed them (its connect step's reconnect policy). */
  reconnects: "connections.reconnected",
  /** Drops after which every reconnect attempt failed. */
  reconnectsFailed: "connections.reconnect_failed",
  /**
   * Planned messages never sent because the server had closed the connection: a per-connection
   * schedule's slots left when its connection was dropped, or a user's send while disconnected.
   * Expected counts them, sent does not (never silently skipped).
   */
  unsent: "messages.unsent",
  canarySent: "canary.sent",
  canaryReceived: "canary.received",
  canaryLost: "canary.lost",
  /** MQTT QoS 1 and 2: publishes the broker acknowledged (PUBACK; PUBCOMP for QoS 2) with success. */
  mqttAcked: "mqtt.acked",
  /** MQTT: retained copies a broker replayed on SUBSCRIBE (not sent live, never a reply or a delivery). */
  mqttRetained: "mqtt.retained",
} as const;
export const GAUGES: readonly string[] = [COUNTERS.connectionsActive];
/** Error counters are named `errors.<class>`: refused, timeout, handshake, protocol, closed, other. */
export const ERROR_PREFIX = "errors.";
/** Per error class, an agent's shard sends at most this many distinct sample texts, and a run summary keeps as many. */
export const ERROR_SAMPLES_PER_CLASS = 5;
/** An error sample's text is cut to this many characters. */
export const ERROR_SAMPLE_CHARS = 300;

/** One engine thread's readings over the interval (an agent running its engine in worker threads). */
export const workerHealthSchema = z.object({
  /** The thread's own CPU, percent of one core. */
  cpu: z.number().nonnegative(),
  eventLoopDelayMs: z.object({ p50: z.number().nonnegative(), max: z.number().nonnegative() }),
  loopBusy: z.number().nonnegative().optional(),
  cpuWait: z.number().nonnegative().optional(),
  sendLagMaxMs: z.number().nonnegative(),
  saturated: z.boolean(),
});
export type WorkerHealth = z.infer<typeof workerHealthSchema>;

export const healthSchema = z.object({
  /**
   * CPU over the interval, percent of one core: the process's, or with engine worker threads the
   * busiest thread's (one thread is what one core can carry).
   */
  cpu: z.number().nonnegative(),
  eventLoopDelayMs: z.object({ p50: z.number().nonnegative(), max: z.number().nonnegative() }),
  /**
   * The event loop's busy share over the interval, percent of wall time (not waiting for I/O or
   * timers; time the thread was preempted counts as busy). In a closed loop over 90 % means replies
   * waited for the agent: the interval is flagged saturated. Absent from older agents.
   */
  loopBusy: z.number().nonnegative().optional(),
  /**
   * Of the interval, percent of wall time the engine thread was ready to run but waiting for a CPU
   * (Linux run-queue delay): its cores taken by other processes. In a closed loop, CPU plus this
   * over 90 % flags the interval saturated. Absent where the kernel does not report it.
   */
  cpuWait: z.number().nonnegative().optional(),
  rssMb: z.number().nonnegative(),
  /** Worst send lag in the interval, ms. */
  sendLagMaxMs: z.number().nonnegative(),
  /** True when the agent itself was the bottleneck (CPU, event loop, send lag, or a closed loop's busy share or CPU demand over limits); with threads, when any one was. */
  saturated: z.boolean(),
  /**
   * Engine worker threads (AGENT_WORKERS), each one's readings, when the shard ran on more than
   * one; the fields above are then the worst thread's. Absent otherwise (and from older agents).
   */
  workers: z.array(workerHealthSchema).max(1024).optional(),
});
export type Health = z.infer<typeof healthSchema>;

export const intervalFrameSchema = z.object({
  runId: z.string().min(1),
  shardId: z.string().min(1),
  agentId: z.string().min(1),
  /** Per shard, starting at 0, +1 per frame; (shardId, seq) is unique and makes storage idempotent. */
  seq: z.number().int().nonnegative(),
  /** Interval number from the synchronized start (0 = first second of the run). */
  index: z.number().int().nonnegative(),
  /** Interval start in hub-clock epoch ms (agent clock corrected by the measured offset). */
  startedAt: z.number(),
  durationMs: z.number().positive(),
  warmup: z.boolean(),
  counters: z.record(z.string(), z.number().int().nonnegative()),
  histograms: z.record(z.string(), z.string()),
  health: healthSchema,
  /**
   * Milliseconds of the interval inside the sending schedule (from the start instant to the last
   * intended send); absent means all of it. Send rates divide by this, so the wait for the last
   * replies after the last send is not counted as sending time.
   */
  activeMs: z.number().nonnegative().optional(),
  /**
   * On a shard's first frame: the planned start instant and the instant the schedule actually
   * began, hub-clock epoch ms as the agent's offset-corrected clock saw them. The hub records the
   * spread across agents on the run (start skew). Optional, so hubs and agents of other versions ignore it.
   */
  start: z.object({ plannedAt: z.number(), startedAt: z.number() }).optional(),
  /**
   * A few messages as text, so the user sees what the server actually said. Flows (`kind` absent
   * or `unmatched`): incoming messages that matched nothing, cut to 500 characters, at most
   * flow.samples per event per shard. Errors (`kind: "error"`, `event` = the error class as in
   * `errors.<class>`): what the error said (close code and reason, HTTP status, the server's text),
   * at most ERROR_SAMPLES_PER_CLASS distinct ones per class per shard.
   */
  samples: z
    .array(z.object({ event: z.string().max(200), data: z.string().max(600), kind: z.enum(["unmatched", "error"]).optional() }))
    .max(100)
    .optional(),
  /** connections.stages: the stage (0-based) the interval starts in. */
  stage: z.number().int().nonnegative().optional(),
  /** sweep: the step whose hold the interval belongs to (gap, warm-up and ramp intervals have none; warm-up ones are `warmup`). */
  step: z
    .object({
      index: z.number().int().nonnegative(),
      /** This shard's planned rate for the step, in the plan's message.per units. */
      rate: z.number().nonnegative(),
      per: z.enum(["connection", "aggregate"]),
      /** The shard stopped the sweep in this step (its stop condition broke). */
      failed: z.boolean().optional(),
      /** sweep.onSaturated: retry: which run of the step this is (absent: the first, 0). */
      attempt: z.number().int().nonnegative().optional(),
      /**
       * Set on the step's last frame when the agent was saturated during its hold: why ("the agent
       * was saturated in 1 of 3 s: CPU 97% > 90%"). The step measured the load generator, not the
       * server, so it is not judged against stopWhen.
       */
      generatorLimited: z.string().max(500).optional(),
    })
    .optional(),
});
export type IntervalFrame = z.infer<typeof intervalFrameSchema>;
