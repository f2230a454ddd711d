/**
 * The seam between the engine and a protocol. Later protocols (socket.io, sockjs, stomp, sse, http)
 * add a Driver; the engine never learns which one it runs. Connect time is measured by the engine
 * around `connect()`, so drivers must resolve exactly when the connection can carry messages.
 */
import type {
  HttpOptions,
  MqttOptions,
  PollingOptions,
  SocketclusterOptions,
  SocketioOptions,
  SockjsOptions,
  SseOptions,
  StompOptions,
  WsOptions,
} from "@volley/contracts";
import type { LookupFunction } from "node:net";
import type { ErrorClass } from "./connect-error";

/** One message as the application speaks it (flows): drivers serialize it for their protocol. */
export interface OutMessage {
  /** Socket.IO and SocketCluster: the event; STOMP: the destination. */
  event?: string;
  /** A JSON value (when `json`), text, or bytes. */
  body: unknown;
  /** body is a JSON value: an object for Socket.IO and SocketCluster, a JSON text frame elsewhere. */
  json: boolean;
  /** Socket.IO: further arguments. */
  args?: unknown[];
  /** STOMP: extra frame headers. */
  headers?: Record<string, string>;
  /** MQTT: this message's QoS (absent: target.mqtt.qos). */
  qos?: 0 | 1 | 2;
}

/** One poll request, rendered (see PollSource). */
export interface PollOut {
  method: string;
  /** Absolute; on the origin of ConnectOptions.url. */
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/**
 * Flows on polling targets: the application's own poll, rendered by the flow from the
 * connection's template context each time (so a cursor captured from one answer moves the next).
 */
export interface PollSource {
  next(): PollOut;
  /** One answer's messages (its captures taken); throws an Error saying what the answer lacks. */
  read(body: string): unknown[];
}

export interface ConnectOptions {
  url: string;
  headers?: Record<string, string>;
  /** Flows, Socket.IO: the handshake's `auth` payload. */
  auth?: unknown;
  /**
   * Flows: the events whose messages the engine wants (replies, waits); drivers without a
   * catch-all listener (Socket.IO 2) subscribe to exactly these.
   */
  listen?: string[];
  /**
   * Flows: the name each `listen` entry is reported under in onEvent, when the plan's destination
   * is a template rendered per connection (STOMP `/queue/reply-{{ conn.index }}`): events are then
   * counted and matched by the plan's own spelling. Absent: the entry itself.
   */
  listenNames?: string[];
  /** Flows on long- and short-polling targets: what each poll sends and how its answer is read. */
  poll?: PollSource;
  /** An attempt still pending after this long fails with class "timeout". */
  connectTimeoutMs: number;
  perMessageDeflate?: boolean;
  /** Source address to bind, for agents with several addresses (beyond ~64K ports each). */
  localAddress?: string;
  /**
   * Hosted mode: resolves host names for the connection's sockets, refusing non-public addresses
   * (@volley/contracts/public-lookup). The socket connects to the address it checked, so a name
   * re-pointed at a private address after the run was queued is refused, not loaded.
   */
  lookup?: LookupFunction;
  /** target.socketio from the plan; the socketio driver's defaults apply when absent. */
  socketio?: SocketioOptions;
  /** target.sockjs from the plan; the sockjs driver's defaults apply when absent. */
  sockjs?: SockjsOptions;
  /** target.<protocol options> from the plan (see connectOptionsFor); each driver's defaults apply when absent. */
  ws?: WsOptions;
  stomp?: StompOptions;
  sse?: SseOptions;
  polling?: PollingOptions;
  http?: HttpOptions;
  socketcluster?: SocketclusterOptions;
  mqtt?: MqttOptions;
  /**
   * Broadcast and group scenarios: the room this connection joins. `connect()` resolves only once
   * the connection is in the room, so the first message already reaches every member. How a
   * protocol joins is the driver's business, following the reference servers in apps/targets:
   * a `room` query parameter on the URL (raw ws, SockJS, SSE, HTTP polling), a join event with an
   * ack (Socket.IO), a subscription to the room's destination, channel or topic (STOMP, SocketCluster, MQTT).
   * Messages sent on a connection that joined a room go to the room.
   */
  room?: string;
}

export interface CloseInfo {
  /** False when we closed it ourselves. */
  byServer: boolean;
  code?: number;
  reason?: string;
  /** Set when the connection ended because of an error rather than a close. */
  errorClass?: ErrorClass;
}

export interface Connection {
  /** Sends one message; ignored once the connection is closing. */
  send(payload: Buffer | string): void;
  /** One handler per connection (a later call replaces it): the hot path stays a direct call. */
  onMessage(cb: (data: Buffer | string) => void): void;
  /** Called once, however the connection ended. */
  onClose(cb: (info: CloseInfo) => void): void;
  /**
   * Errors that fail one message but leave the connection open (an HTTP request answered 500, a
   * STOMP RECEIPT-less ERROR on one SEND). Optional: the message is counted lost at its timeout
   * either way; drivers that can tell why report it here so it is counted by class at once.
   */
  onError?(cb: (errorClass: ErrorClass, detail: string) => void): void;
  /**
   * Plain HTTP: the connect time (µs) of each socket a request goes out on (keepAlive: false: every
   * request's; keep-alive: a reopened socket), recorded as `http.connect`. Optional: other
   * protocols connect once, which the engine times itself.
   */
  onSocketConnect?(cb: (connectUs: number) => void): void;
  /**
   * Protocol events worth counting that are neither messages nor errors (MQTT: acknowledged
   * publishes, retained copies), counted under the COUNTERS name given. Optional.
   */
  onCount?(cb: (counter: string) => void): void;
  close(): void;
  /**
   * Flows: sends one message as the application speaks it; `ack`, where the protocol has
   * acknowledgements, receives the acknowledgement's data. Ignored once the connection is closing.
   */
  emit?(msg: OutMessage, ack?: (data: unknown) => void): void;
  /**
   * Flows: every incoming message with its event (Socket.IO, SocketCluster), destination (STOMP) or
   * SSE event type; undefined where the protocol has none. Replaces onMessage's handler.
   */
  onEvent?(cb: (event: string | undefined, data: unknown) => void): void;
}

export interface Driver {
  readonly protocol: string;
  /** Rejects with a ConnectError. */
  connect(opts: ConnectOptions): Promise<Connection>;
}
