import { connect as netConnect, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import type { HttpOptions } from "@volley/contracts";
import { ConnectionBase } from "./connection-base";
import type { ConnectOptions } from "./driver";
import { classifyHttpError } from "./http-common";

const HEADER_END = Buffer.from("\r\n\r\n");
const CHUNKED_END = Buffer.from("0\r\n\r\n");
/** A server that answered in full but keeps the socket open anyway is closed by us after this long. */
const LINGER_MS = 2_000;

/** Where and how every socket of a one-shot connection connects. */
export interface OneShotTarget {
  host: string;
  port: number;
  tls: boolean;
  servername: string;
  connectTimeoutMs: number;
  localAddress?: string;
  lookup?: ConnectOptions["lookup"];
}

/** Reads land here (one buffer for every one-shot socket: each read is handled before the next), not in a new Buffer each. */
const READ_BUFFER = Buffer.allocUnsafe(65_536);

/** The event after which a socket to `t` can carry a request: TCP's connect, or TLS's handshake. */
export const connectedEvent = (t: Pick<OneShotTarget, "tls">) => (t.tls ? "secureConnect" : "connect");

/**
 * openSocket, and `onConnected` with how long the connect took (µs, through the TLS handshake):
 * the one way an HTTP connect is timed, whether it is a connection's first socket or a request's own.
 */
export function openTimedSocket(t: OneShotTarget, onRead: ((n: number, buf: Buffer) => void) | undefined, onConnected: (connectUs: number) => void): Socket {
  const opening = performance.now();
  const socket = openSocket(t, onRead);
  socket.once(connectedEvent(t), () => onConnected(Math.round((performance.now() - opening) * 1000)));
  return socket;
}

/** Opens one socket to `t` (TCP, or TLS for https); `onRead` takes every read of a plain TCP socket (TLS sockets emit `data`). */
export function openSocket(t: OneShotTarget, onRead?: (n: number, buf: Buffer) => void): Socket {
  const common = {
    host: t.host,
    port: t.port,
    noDelay: true,
    ...(t.localAddress ? { localAddress: t.localAddress } : {}),
    ...(t.lookup ? { lookup: t.lookup } : {}),
  };
  if (t.tls) return tlsConnect({ ...common, servername: t.servername, ALPNProtocols: ["http/1.1"] });
  return netConnect(
    onRead
      ? {
          ...common,
          onread: {
            buffer: READ_BUFFER,
            callback: (n: number, buf: Uint8Array) => {
              onRead(n, buf as Buffer);
              return true;
            },
          },
        }
      : common,
  );
}

/**
 * The request head (without its final blank line), built once: every request of a connection is
 * the same but for its body. `keepAlive` false asks the server to close after answering.
 */
export function requestHead(url: URL, options: HttpOptions, headers: Record<string, string>, keepAlive = false): string {
  let head = `${options.method} ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n${keepAlive ? "" : "connection: close\r\n"}`;
  for (const [k, v] of Object.entries(headers)) {
    const name = k.toLowerCase();
    if (name === "host" || name === "connection" || name === "content-length") continue;
    head += `${k}: ${v}\r\n`;
  }
  return head;
}

/**
 * One HTTP/1.1 exchange on a socket of its own (`Connection: close`), read with the least work: the
 * status from the first line, then the end of the response from its Content-Length, a chunked
 * body's last chunk, or the server's close. No parser object, no header map per request: that and
 * a client object per socket are what made a fresh connection per request cost the agent several
 * times what `ab` spends on it.
 */
class Exchange {
  private head: Buffer | undefined;
  private status = 0;
  /** Bytes of the whole response once its length is known; -1 chunked; -2 until the server closes; -3 head not read yet. */
  private total = -3;
  private received = 0;
  /** Chunked: the last bytes seen, to spot the final chunk across reads. */
  private tail: Buffer | undefined;
  private done = false;
  private error: Error | undefined;
  private linger: NodeJS.Timeout | undefined;
  private socket!: Socket;
  /** When the socket was asked for (performance.now() ms), for the connect timeout sweep. */
  private readonly startedMs = performance.now();

  constructor(
    private readonly noBody: boolean,
    private readonly answered: (status: number) => void,
    private readonly failed: (err: unknown) => void,
  ) {}

  /** Takes the socket's events; a plain TCP socket opened with `onRead` delivers its reads there instead of `data`. */
  attach(socket: Socket, dataEvents: boolean): void {
    this.socket = socket;
    if (dataEvents) socket.on("data", (chunk: Buffer) => this.onRead(chunk.length, chunk));
    socket.on("error", this.onError);
    socket.on("close", this.onClose);
    socket.on("end", this.onEnd);
  }

  /**
   * The server closed its side (it closes first after `Connection: close`, so the TIME_WAIT is its
   * own): close ours at once. Left to itself, a socket that is not half-open ends its writable side
   * first (a shutdown call and the stream's end steps) and only then closes, once per request.
   */
  private readonly onEnd = (): void => {
    this.socket.destroy();
  };

  /** `buf` is valid only during the call (the shared read buffer). */
  readonly onRead = (n: number, buf: Buffer): void => {
    if (this.done) return;
    const chunk = n === buf.length ? buf : buf.subarray(0, n);
    this.received += n;
    if (this.total === -3) {
      const data = this.head ? Buffer.concat([this.head, chunk]) : chunk;
      const end = data.indexOf(HEADER_END);
      if (end < 0) {
        this.head = Buffer.from(data); // a copy: the read buffer is reused
        return;
      }
      this.head = undefined;
      this.readHead(data.toString("latin1", 0, end), end + 4);
      if ((this.total as number) === -1) this.tail = Buffer.from(data.subarray(Math.max(end + 4, data.length - 5)));
    } else if (this.total === -1) {
      const joined = Buffer.concat([this.tail!, chunk]);
      this.tail = joined.subarray(Math.max(0, joined.length - 5));
    }
    if (this.total >= 0 ? this.received >= this.total : this.total === -1 && this.tail!.equals(CHUNKED_END)) this.finish();
  };

  /** Reads the status and how the body ends; `bodyAt` is where the body starts in the response. */
  private readHead(text: string, bodyAt: number): void {
    // "HTTP/1.1 200 OK": the status is the three digits after the first space.
    this.status = Number(text.slice(9, 12)) || 0;
    if (this.noBody || this.status === 204 || this.status === 304 || (this.status >= 100 && this.status < 200)) {
      this.total = bodyAt;
      return;
    }
    const lower = text.toLowerCase();
    const cl = /\r\ncontent-length:[ \t]*(\d+)/.exec(lower);
    if (cl) this.total = bodyAt + Number(cl[1]);
    else if (/\r\ntransfer-encoding:[^\r]*chunked/.test(lower)) this.total = -1;
    else this.total = -2;
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    this.tail = undefined;
    this.answered(this.status);
    // The server closes after `Connection: close` (its side keeps the TIME_WAIT, not our ports); one that does not is closed for it.
    if (!this.socket.destroyed) this.linger = setTimeout(() => this.socket.destroy(), LINGER_MS);
  }

  private readonly onError = (err: Error): void => {
    this.error ??= err;
  };

  /** Every socket ends here: after an error, the server's close, or ours. */
  private readonly onClose = (): void => {
    if (this.linger) clearTimeout(this.linger);
    if (this.done) return;
    // A response that ends at the close (no length) is complete; anything else was cut short.
    if (!this.error && this.total === -2) return this.finish();
    this.fail(
      this.error ??
        Object.assign(new Error(this.status ? "the server closed before the response was complete" : "the server closed without answering"), {
          code: "UND_ERR_SOCKET",
        }),
    );
  };

  private fail(err: unknown): void {
    this.done = true;
    this.socket.destroy();
    this.failed(err);
  }

  /** The connect sweep: true (and the socket ended as a timeout) when still connecting after `timeoutMs`. */
  timedOut(nowMs: number, timeoutMs: number): boolean {
    if (this.done || !this.socket.connecting || nowMs - this.startedMs < timeoutMs) return false;
    this.socket.destroy(Object.assign(new Error(`connect timed out after ${timeoutMs} ms`), { code: "UND_ERR_CONNECT_TIMEOUT" }));
    return true;
  }

  abort(): void {
    this.done = true;
    this.socket.destroy();
  }
}

/**
 * `target.http.keepAlive: false`: a load connection is a virtual user whose every request goes out
 * on a new TCP (or TLS) connection, as `ab` without -k does. The connect the engine times is the
 * first request's socket; a later refused or failed connect is that request's error (class
 * refused, timeout, closed), never the end of the user.
 */
export class OneShotHttpConnection extends ConnectionBase {
  private readonly head: string;
  private readonly hasBody: boolean;
  private readonly open = new Set<Exchange>();
  /** One timer per connection checks every pending connect, rather than a timer per socket. */
  private sweep: NodeJS.Timeout | undefined;

  constructor(
    private readonly target: OneShotTarget,
    private first: Socket | undefined,
    /** The first socket's connect (µs), reported as the first request's own when that request takes the socket. */
    private readonly firstConnectUs: number,
    url: URL,
    private readonly options: HttpOptions,
    headers: Record<string, string>,
  ) {
    super();
    this.head = requestHead(url, options, headers);
    this.hasBody = !(options.method === "GET" || options.method === "HEAD" || options.method === "DELETE");
  }

  send(payload: Buffer | string): void {
    if (this.closingByUs) return;
    const reused = this.first && !this.first.destroyed ? this.first : undefined;
    this.first = undefined;
    const exchange = new Exchange(
      this.options.method === "HEAD",
      (status) => {
        this.open.delete(exchange);
        if (this.closingByUs) return;
        if (status >= 200 && status < 300) this.deliver(payload);
        else this.messageError("protocol", `HTTP ${status}`);
      },
      (err) => {
        this.open.delete(exchange);
        if (this.closingByUs) return;
        const { errorClass, detail } = classifyHttpError(err);
        this.messageError(errorClass, detail);
      },
    );
    let socket: Socket;
    if (reused) {
      socket = reused;
      socket.removeAllListeners("error");
      exchange.attach(socket, true);
      this.socketConnected(this.firstConnectUs);
    } else {
      socket = openTimedSocket(this.target, this.target.tls ? undefined : exchange.onRead, (us) => {
        if (!this.closingByUs) this.socketConnected(us);
      });
      exchange.attach(socket, this.target.tls);
      this.sweep ??= setInterval(this.sweepConnects, Math.min(250, Math.max(10, this.target.connectTimeoutMs / 4))).unref();
    }
    this.open.add(exchange);
    if (this.hasBody) {
      const body = this.options.body ?? payload;
      socket.write(`${this.head}content-length: ${Buffer.byteLength(body)}\r\n\r\n`, "latin1");
      socket.write(body);
    } else socket.write(`${this.head}\r\n`, "latin1");
  }

  private readonly sweepConnects = (): void => {
    const now = performance.now();
    for (const e of this.open) e.timedOut(now, this.target.connectTimeoutMs);
  };

  protected shutdown(): void {
    if (this.sweep) clearInterval(this.sweep);
    this.first?.destroy();
    for (const e of this.open) e.abort();
    this.open.clear();
    this.ended({ reason: "closed by the client" });
  }
}
