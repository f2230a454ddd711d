import { Agent as HttpAgent } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import { socketioOptionsSchema, type SocketioOptions } from "@volley/contracts";
import { io, type Socket } from "socket.io-client";
import { ConnectError, type ErrorClass } from "./connect-error";
import { ConnectionBase } from "./connection-base";
import type { ConnectOptions, Connection, Driver } from "./driver";
import { classifyWsError } from "./ws-driver";

/** Socket.IO hands binary back as Buffer, ArrayBuffer or a typed array depending on transport. */
function toPayload(data: unknown): Buffer | string {
  if (Buffer.isBuffer(data) || typeof data === "string") return data;
  if (data instanceof ArrayBuffer) return Buffer.from(data);
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  // Not one of our messages: the engine counts it as a protocol error.
  return JSON.stringify(data) ?? "";
}

interface ErrnoLike {
  code?: string;
  message: string;
}

/** Maps a socket.io-client connect_error to an error class, keeping the HTTP status when one is known. */
export function classifySocketioError(err: Error & { type?: string; description?: unknown; context?: unknown }): { errorClass: ErrorClass; detail: string } {
  if (err.message === "timeout") return { errorClass: "timeout", detail: "no connect in time" };
  if (err.type === "TransportError") {
    const d = err.description;
    // Polling: the HTTP status, or 0 with the socket error kept on the XMLHttpRequest.
    if (typeof d === "number" && d > 0) return { errorClass: "handshake", detail: `HTTP ${d}` };
    const cause = (d as { error?: ErrnoLike } | undefined)?.error ?? (err.context as { statusText?: unknown } | undefined)?.statusText;
    if (cause instanceof Error) {
      const status = /Unexpected server response: (\d+)/.exec(cause.message);
      if (status) return { errorClass: "handshake", detail: `HTTP ${status[1]}` };
      return classifyWsError(cause);
    }
    return { errorClass: "other", detail: err.message };
  }
  if (/parse|parser|invalid payload/i.test(err.message)) return { errorClass: "protocol", detail: err.message };
  // Anything else came from the server's side of the Socket.IO handshake: a middleware refusal
  // ("invalid delay"), an unknown namespace ("Invalid namespace").
  return { errorClass: "handshake", detail: err.message };
}

/** Disconnect reasons as socket.io-client names them. */
function closeClass(reason: string): ErrorClass {
  if (reason === "ping timeout") return "timeout";
  if (reason === "parse error") return "protocol";
  return "closed";
}

class SocketioConnection extends ConnectionBase {
  private readonly ackReply = (reply: unknown) => this.deliver(toPayload(reply));

  constructor(
    private readonly socket: Socket,
    private readonly options: SocketioOptions,
    private readonly agent: HttpAgent,
  ) {
    super();
    if (!options.ack) socket.on(options.event, (data: unknown) => this.deliver(toPayload(data)));
    socket.on("disconnect", (reason: string) => {
      this.agent.destroy();
      this.ended({ reason }, closeClass(reason));
    });
  }

  send(payload: Buffer | string): void {
    // Disconnected sockets would buffer emits and send them on a reconnect that never comes.
    if (!this.socket.connected) return;
    if (this.options.ack) this.socket.emit(this.options.event, payload, this.ackReply);
    else this.socket.emit(this.options.event, payload);
  }

  protected shutdown(): void {
    this.socket.disconnect();
  }
}

/** The URL socket.io-client connects to: target.url with the plan's namespace, if any, as its path. */
function socketUrl(url: string, namespace: string | undefined): string {
  if (namespace === undefined) return url;
  const u = new URL(url);
  u.pathname = namespace;
  return u.toString();
}

/** Socket.IO v4 (Engine.IO v4) via socket.io-client: the message is one event, its reply an event or an ack. */
export const socketioDriver: Driver = {
  protocol: "socketio",
  connect(opts: ConnectOptions): Promise<Connection> {
    const options = opts.socketio ?? socketioOptionsSchema.parse({});
    // Its own keep-alive pool per connection: socket.io-client's Node XHR otherwise opens a TCP
    // connection per long-poll and per post, which would add that cost to every polling reply.
    // Two sockets: one poll and one post can be in flight at once.
    const agent = new (opts.url.startsWith("https:") ? HttpsAgent : HttpAgent)({ keepAlive: true, maxSockets: 2 });
    return new Promise((resolve, reject) => {
      const socket = io(socketUrl(opts.url, options.namespace), {
        path: options.path,
        transports: options.transports,
        // One Engine.IO connection per load connection: the default multiplexes sockets to the same host.
        forceNew: true,
        multiplex: false,
        // A silent reconnect would hide the disconnect; the engine counts it instead.
        reconnection: false,
        timeout: opts.connectTimeoutMs,
        agent: agent as unknown as string,
        extraHeaders: opts.headers,
      });
      let settled = false;
      const fail = (errorClass: ErrorClass, detail: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        socket.removeAllListeners();
        socket.disconnect();
        agent.destroy();
        reject(new ConnectError(errorClass, detail));
      };
      // socket.io-client times the Engine.IO handshake only; this also covers the namespace connect.
      const timer = setTimeout(() => fail("timeout", `no answer in ${opts.connectTimeoutMs} ms`), opts.connectTimeoutMs);
      socket.on("connect_error", (err) => {
        const { errorClass, detail } = classifySocketioError(err);
        fail(errorClass, detail);
      });
      socket.once("disconnect", (reason) => fail("closed", `closed before the connect completed (${reason})`));
      socket.once("connect", () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        socket.removeAllListeners();
        resolve(new SocketioConnection(socket, options, agent));
      });
    });
  },
};
