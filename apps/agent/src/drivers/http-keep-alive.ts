import type { Socket } from "node:net";
import type { HttpOptions } from "@volley/contracts";
import { ConnectError, type ErrorClass } from "./connect-error";
import { ConnectionBase } from "./connection-base";
import { classifyHttpError } from "./http-common";
import { connectedEvent, openTimedSocket, requestHead, type OneShotTarget } from "./http-one-shot";
import { ResponseParser } from "./http-response-parser";

/** Without a `Keep-Alive: timeout` hint, an idle socket is not reused after this long (undici's default). */
const IDLE_REUSE_MS = 4_000;
/** A hinted timeout is cut by this much: the server's timer and ours do not start at the same instant. */
const IDLE_MARGIN_MS = 1_000;

const timeoutError = (ms: number) => Object.assign(new Error(`connect timed out after ${ms} ms`), { code: "UND_ERR_CONNECT_TIMEOUT" });

/**
 * Plain HTTP over one kept-alive socket per load connection, written straight onto the socket: the
 * request head is built once (a GET is the same bytes every time), responses are read by
 * ResponseParser without a parser object, header map or body stream per request. That is what a
 * request cost on undici's client (more than its dispatch itself), and it put the agent at 1.6×
 * autocannon's CPU per request on a simple server.
 *
 * Up to `pipelining` requests are in flight on the socket, the rest wait in order. A server that
 * closes an idle socket, or says `Connection: close`, gets a new socket at the next request; a
 * socket that drops with requests in flight, or a reconnect that fails, ends the connection with
 * its error class (refused, timeout, closed), as a disconnect would.
 */
export class KeepAliveHttpConnection extends ConnectionBase {
  private socket: Socket | undefined;
  private parser: ResponseParser;
  /** Payloads of the requests on the socket, oldest first: each response answers the first. */
  private readonly inFlight: (Buffer | string)[] = [];
  private readonly waiting: (Buffer | string)[] = [];
  /** The server said it closes after the response it is on: nothing more goes on this socket. */
  private draining = false;
  private error: Error | undefined;
  /** After this (performance.now() ms) an idle socket may be closed by the server any moment: not reused. */
  private reuseUntil = Infinity;
  private readonly head: string;
  /** A request without a body: the same bytes every time. */
  private readonly fixed: Buffer | undefined;
  private readonly noBody: () => boolean;
  /** Sockets opened so far: those after the first (the server closed one) have their connects reported. */
  private sockets = 0;

  private constructor(
    private readonly target: OneShotTarget,
    private readonly options: HttpOptions,
    url: URL,
    headers: Record<string, string>,
  ) {
    super();
    this.head = requestHead(url, options, headers, true);
    const bodyless = options.method === "GET" || options.method === "HEAD" || options.method === "DELETE";
    this.fixed = bodyless ? Buffer.from(`${this.head}\r\n`, "latin1") : undefined;
    const head = options.method === "HEAD";
    this.noBody = () => head;
    this.parser = new ResponseParser(this.answered);
  }

  /** Connects the first socket (the connect the engine times); rejects with a ConnectError. */
  static open(target: OneShotTarget, options: HttpOptions, url: URL, headers: Record<string, string>): Promise<KeepAliveHttpConnection> {
    const conn = new KeepAliveHttpConnection(target, options, url, headers);
    return new Promise((resolve, reject) => {
      const socket = conn.connectSocket();
      const onError = (err: Error) => {
        const { errorClass, detail } = classifyHttpError(err);
        reject(new ConnectError(errorClass, detail));
      };
      socket.once("error", onError);
      socket.once(connectedEvent(target), () => {
        socket.off("error", onError);
        resolve(conn);
      });
    });
  }

  send(payload: Buffer | string): void {
    if (this.closingByUs) return;
    // A request written just as the server times out the idle socket would be cut off with it: retire it first.
    if (this.socket && this.inFlight.length === 0 && performance.now() > this.reuseUntil) this.retireSocket();
    if (this.socket && !this.draining && this.inFlight.length < this.options.pipelining) this.write(payload);
    else {
      this.waiting.push(payload);
      if (!this.socket) this.connectSocket();
    }
  }

  private write(payload: Buffer | string): void {
    const socket = this.socket!;
    this.inFlight.push(payload);
    if (this.fixed) {
      socket.write(this.fixed);
      return;
    }
    const body = this.options.body ?? payload;
    socket.cork();
    socket.write(`${this.head}content-length: ${Buffer.byteLength(body)}\r\n\r\n`, "latin1");
    socket.write(body);
    socket.uncork();
  }

  private connectSocket(): Socket {
    // The first socket's connect is the connection's (timed by the engine); a reopened one is a request's.
    const reopened = this.sockets++ > 0;
    const onRead = this.target.tls ? undefined : (n: number, buf: Buffer) => this.onData(n === buf.length ? buf : buf.subarray(0, n));
    const socket = openTimedSocket(this.target, onRead, (us) => {
      if (reopened && !this.closingByUs) this.socketConnected(us);
    });
    this.socket = socket;
    this.draining = false;
    this.reuseUntil = Infinity;
    this.error = undefined;
    this.parser = new ResponseParser(this.answered);
    if (this.target.tls) socket.on("data", (d: Buffer) => this.onData(d));
    const ms = this.target.connectTimeoutMs;
    if (ms > 0) {
      socket.setTimeout(ms, () => socket.destroy(timeoutError(ms)));
      socket.once(connectedEvent(this.target), () => socket.setTimeout(0));
    }
    socket.on("error", (err: Error) => {
      if (socket === this.socket) this.error ??= err;
    });
    socket.on("close", () => this.onSocketClose(socket));
    // Requests that waited for this socket go out on it (net queues them until it connects).
    this.flush();
    return socket;
  }

  private onData(data: Buffer): void {
    if (this.closingByUs) return;
    if (!this.parser.feed(data, this.noBody)) {
      this.error = Object.assign(new Error("malformed HTTP response"), { code: "UND_ERR_SOCKET" });
      this.socket?.destroy();
    }
  }

  private readonly answered = (status: number, closeAfter: boolean, keepAliveMs: number): void => {
    const payload = this.inFlight.shift();
    if (closeAfter) this.draining = true;
    this.reuseUntil = performance.now() + (keepAliveMs >= 0 ? Math.max(0, keepAliveMs - IDLE_MARGIN_MS) : IDLE_REUSE_MS);
    if (this.closingByUs || payload === undefined) return;
    if (status >= 200 && status < 300) this.deliver(payload);
    else this.messageError("protocol", `HTTP ${status}`);
    this.flush();
  };

  private flush(): void {
    while (this.waiting.length > 0 && this.socket && !this.draining && this.inFlight.length < this.options.pipelining && !this.closingByUs)
      this.write(this.waiting.shift()!);
  }

  /** Closes the current (idle) socket without a word: its close is no one's error. */
  private retireSocket(): void {
    const old = this.socket!;
    this.socket = undefined;
    old.destroy();
  }

  private onSocketClose(socket: Socket): void {
    if (socket !== this.socket || this.closingByUs) return;
    this.parser.closed();
    this.socket = undefined;
    // Requests cut off with the socket, or a reconnect that failed: the connection is gone.
    if (this.inFlight.length > 0 || this.error) {
      const { errorClass, detail } = this.error
        ? classifyHttpError(this.error)
        : { errorClass: "closed" as ErrorClass, detail: "the server closed the connection with requests in flight" };
      this.inFlight.length = 0;
      this.waiting.length = 0;
      this.ended({ reason: detail }, errorClass);
      return;
    }
    // An idle close (keep-alive timeout, or `Connection: close` honoured): the next request reconnects.
    if (this.waiting.length > 0) this.connectSocket();
  }

  protected shutdown(): void {
    const socket = this.socket;
    this.socket = undefined;
    socket?.destroy();
    this.inFlight.length = 0;
    this.waiting.length = 0;
    this.ended({ reason: "closed by the client" });
  }
}
