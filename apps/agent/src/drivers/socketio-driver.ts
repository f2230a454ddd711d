import { socketioOptionsSchema, type SocketioOptions } from "@volley/contracts";
import { ConnectError, type ErrorClass } from "./connect-error";
import { ConnectionBase } from "./connection-base";
import type { ConnectOptions, Connection, Driver, OutMessage } from "./driver";
import { noRedirectAgent, type NoRedirectAgent } from "./no-redirect-agent";
import { openIoSocket, type IoSocket } from "./socketio-client";

/** The event a connection emits, with the room name and an ack, to join a room (broadcast and group scenarios). */
export const SOCKETIO_JOIN_EVENT = "join";

/** Socket.IO hands binary back as Buffer, ArrayBuffer or a typed array depending on transport. */
function toPayload(data: unknown): Buffer | string {
  if (Buffer.isBuffer(data) || typeof data === "string") return data;
  if (data instanceof ArrayBuffer) return Buffer.from(data);
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  // Not one of our messages: the engine counts it as a protocol error.
  return JSON.stringify(data) ?? "";
}

/** Disconnect reasons as socket.io-client names them. */
function closeClass(reason: string): ErrorClass {
  if (reason === "ping timeout") return "timeout";
  if (reason === "parse error") return "protocol";
  return "closed";
}

/** A flow's view of an event's arguments: the one argument, or all of them when there are several. */
const eventData = (args: unknown[]): unknown => (args.length === 1 ? args[0] : args);

class SocketioConnection extends ConnectionBase {
  private eventCb: (event: string | undefined, data: unknown) => void = () => {};

  constructor(
    private readonly socket: IoSocket,
    private readonly options: SocketioOptions,
    private readonly agent: NoRedirectAgent,
    inRoom: boolean,
    listen: string[] | undefined,
  ) {
    super();
    if (listen) {
      // A flow: every event goes to the engine, which matches replies and counts the rest. The v2
      // client has no catch-all, so it hears the events the flow names.
      if (socket.onAny) socket.onAny((event, ...args) => this.eventCb(event, eventData(args)));
      else for (const event of listen) socket.on(event, (...args: unknown[]) => this.eventCb(event, eventData(args)));
    }
    // In a room the other members' messages arrive as events even when the sender's own reply is an ack.
    else if (!options.ack || inRoom) socket.on(options.event, (data: unknown) => this.deliver(toPayload(data)));
    socket.on("disconnect", (reason: string) => {
      this.agent.destroy();
      this.ended({ reason }, closeClass(reason));
    });
  }

  send(payload: Buffer | string): void {
    // Disconnected sockets would buffer emits and send them on a reconnect that never comes.
    if (!this.socket.connected) return;
    // The ack is the reply to this very emit, whatever it carries (an echo, or a ping server's
    // `{count}`): hand the engine the message it answers, so it is matched and timed exactly.
    if (this.options.ack) this.socket.emit(this.options.event, payload, () => this.deliver(payload));
    else this.socket.emit(this.options.event, payload);
  }

  override emit(msg: OutMessage, ack?: (data: unknown) => void): void {
    if (!this.socket.connected) return;
    const args: unknown[] = [msg.body];
    if (msg.args) args.push(...msg.args);
    if (ack) args.push((...reply: unknown[]) => ack(eventData(reply)));
    this.socket.emit(msg.event ?? this.options.event, ...args);
  }

  override onEvent(cb: (event: string | undefined, data: unknown) => void): void {
    this.eventCb = cb;
  }

  protected shutdown(): void {
    dropUnsent(this.socket);
    this.socket.disconnect();
  }
}

/** What the driver reaches of the client's Engine.IO socket (socket.io-client 4 and 2 alike). */
interface EngineLike {
  writeBuffer?: unknown[];
  transport?: { ws?: { bufferedAmount?: number; terminate?: () => void } | null };
}

/**
 * A run that ends with sends still queued (an aborted, overloaded shard) must stop loading the
 * server now: Engine.IO's close first waits for its write buffer to drain and ws's close frame goes
 * behind every buffered byte, which kept a saturated agent sending for ~50 s after its run ended.
 * With anything queued, the WebSocket is torn down instead; an idle one closes cleanly as before.
 */
function dropUnsent(socket: IoSocket): void {
  const engine = (socket as { io?: { engine?: EngineLike } }).io?.engine;
  const ws = engine?.transport?.ws;
  if (!engine || !ws?.terminate) return;
  if ((engine.writeBuffer?.length ?? 0) === 0 && (ws.bufferedAmount ?? 0) === 0) return;
  engine.writeBuffer!.length = 0;
  ws.terminate();
}

/**
 * A Socket.IO connect that fails over an open Engine.IO connection (the server closes it, or never
 * answers) is most often a parser mismatch, which neither end names: say which parser was used and
 * the fix. `what` is how it failed.
 */
function namespaceFailure(what: string, options: SocketioOptions): string {
  const after = `${what} after the Engine.IO handshake`;
  if (options.parser === "msgpack")
    return `${after}, with socketio.parser: msgpack: a server on Socket.IO's default parser cannot read a msgpack connect; remove parser unless the server was created with socket.io-msgpack-parser`;
  if (options.version === 2) return after;
  return `${after}, with Socket.IO's default parser: a server created with socket.io-msgpack-parser needs socketio.parser: msgpack`;
}

/**
 * Socket.IO: the message is one event, its reply an event or an ack. v3 and v4 servers (Engine.IO
 * 4) get socket.io-client 4, v2 servers (Engine.IO 3) socket.io-client 2 (socketio.version).
 */
export const socketioDriver: Driver = {
  protocol: "socketio",
  connect(opts: ConnectOptions): Promise<Connection> {
    const options = opts.socketio ?? socketioOptionsSchema.parse({});
    // Its own keep-alive pool per connection: socket.io-client's Node XHR otherwise opens a TCP
    // connection per long-poll and per post, which would add that cost to every polling reply.
    // Two sockets: one poll and one post can be in flight at once. Redirects are refused, not followed.
    const agent = noRedirectAgent(opts.url, { keepAlive: true, maxSockets: 2, ...(opts.lookup ? { lookup: opts.lookup } : {}) });
    return new Promise((resolve, reject) => {
      let socket: IoSocket | undefined;
      let settled = false;
      const fail = (errorClass: ErrorClass, detail: string) => {
        if (settled) return;
        settled = true;
        // The client reports a refused redirect as a bare transport error; the agent knows where it pointed.
        if (agent.refusedRedirect) [errorClass, detail] = ["handshake", agent.refusedRedirect];
        clearTimeout(timer);
        // Undefined only when the client failed synchronously, inside openIoSocket.
        socket?.removeAllListeners();
        socket?.disconnect();
        agent.destroy();
        reject(new ConnectError(errorClass, detail));
      };
      // socket.io-client times the Engine.IO handshake only; this also covers the namespace connect,
      // which is what fails (closed, or never answered) when the two ends use different parsers.
      let engineOpen = false;
      const timer = setTimeout(
        () =>
          fail(
            "timeout",
            engineOpen ? namespaceFailure(`no Socket.IO connect in ${opts.connectTimeoutMs} ms`, options) : `no answer in ${opts.connectTimeoutMs} ms`,
          ),
        opts.connectTimeoutMs,
      );
      const opened = openIoSocket(
        { url: opts.url, socketio: options, connectTimeoutMs: opts.connectTimeoutMs, agent, headers: opts.headers, auth: opts.auth },
        fail,
      );
      socket = opened;
      opened.io?.once("open", () => (engineOpen = true));
      if (settled) {
        opened.disconnect();
        return;
      }
      opened.once("disconnect", (reason: string) =>
        fail("closed", engineOpen ? namespaceFailure(`closed (${reason})`, options) : `closed before the connect completed (${reason})`),
      );
      const ready = () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        opened.removeAllListeners();
        resolve(new SocketioConnection(opened, options, agent, opts.room !== undefined, opts.listen));
      };
      // With a room, open means joined: the server acknowledges the join, and the connect timer covers it.
      // A server that refuses the join says why in the ack ({ error }); any other answer means joined.
      const joined = (reply: unknown) => {
        const error = reply !== null && typeof reply === "object" ? (reply as { error?: unknown }).error : undefined;
        if (error !== undefined) fail("handshake", `join ${opts.room}: ${String(error)}`);
        else ready();
      };
      opened.once("connect", () => (opts.room === undefined ? ready() : opened.emit(SOCKETIO_JOIN_EVENT, opts.room, joined)));
    });
  },
};
