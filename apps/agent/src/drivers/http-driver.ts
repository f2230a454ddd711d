import { httpOptionsSchema, type HttpOptions } from "@volley/contracts";
import { buildConnector, Client, type Dispatcher } from "undici";
import type { Socket } from "node:net";
import { ConnectError, type ErrorClass } from "./connect-error";
import { ConnectionBase } from "./connection-base";
import type { ConnectOptions, Connection, Driver } from "./driver";
import { classifyHttpError, isTransportError, pathOf, withHeaders } from "./http-common";

const NO_BODY = new Set(["GET", "HEAD", "DELETE"]);

/**
 * One request in flight, as undici's raw dispatch handler: no promise, no body stream, the
 * response body discarded chunk by chunk. That is most of what a request cost on the promise API
 * (request() + body.dump()), which made the agent the bottleneck against a fast server.
 */
class RequestHandler implements Dispatcher.DispatchHandler {
  private status = 0;

  constructor(
    private readonly conn: HttpConnection,
    private readonly payload: Buffer | string,
  ) {}

  onConnect(): void {}

  onHeaders(statusCode: number): boolean {
    this.status = statusCode;
    return true;
  }

  onData(): boolean {
    return true;
  }

  onComplete(): void {
    this.conn.answered(this.status, this.payload);
  }

  onError(err: Error): void {
    this.conn.failed(err);
  }
}

/**
 * Plain HTTP request/response: a load connection is one keep-alive socket (undici Client), a
 * message is one request, and its reply is the complete response with a 2xx status. The message
 * itself is handed back as the reply (request body or not), so any endpoint can be timed, echo or
 * not; any other status is a per-message error of class "protocol" ("HTTP 503").
 *
 * With `keepAlive: false` every request goes out on a new TCP connection (`Connection: close`, as
 * `ab` without -k does): a connect that fails is then that request's error, not the end of the
 * load connection, which is a virtual user making request after request.
 */
class HttpConnection extends ConnectionBase {
  private readonly opts: Dispatcher.DispatchOptions;
  private readonly hasBody: boolean;
  private readonly fixedBody: string | undefined;
  private readonly perRequest: boolean;

  constructor(
    private readonly client: Client,
    url: URL,
    options: HttpOptions,
    headers: Record<string, string>,
  ) {
    super();
    this.hasBody = !NO_BODY.has(options.method);
    this.fixedBody = options.body;
    this.perRequest = !options.keepAlive;
    this.opts = { method: options.method, path: pathOf(url), headers, ...(this.perRequest ? { reset: true } : {}) };
  }

  send(payload: Buffer | string): void {
    if (this.closingByUs) return;
    const opts = this.hasBody ? { ...this.opts, body: this.fixedBody ?? payload } : this.opts;
    this.client.dispatch(opts, new RequestHandler(this, payload));
  }

  answered(status: number, payload: Buffer | string): void {
    if (this.closingByUs) return;
    if (status >= 200 && status < 300) this.deliver(payload);
    else this.messageError("protocol", `HTTP ${status}`);
  }

  failed(err: unknown): void {
    if (this.closingByUs) return;
    const { errorClass, detail } = classifyHttpError(err);
    // A keep-alive socket that is refused or dropped ends this connection, as a disconnect would.
    if (!this.perRequest && isTransportError(errorClass)) this.end(errorClass, detail);
    else this.messageError(errorClass, detail);
  }

  private end(errorClass: ErrorClass, reason: string): void {
    void this.client.destroy().catch(() => {});
    this.ended({ reason }, errorClass);
  }

  protected shutdown(): void {
    void this.client.destroy().catch(() => {});
    this.ended({ reason: "closed by the client" });
  }
}

/**
 * Flows: an HTTP "connection" is a virtual user, no socket of its own — its setup and message
 * requests go over the shard's shared keep-alive pool (flow/http-step.ts), and each message's own
 * response is its reply. Open at once; nothing to send on it, nothing to close but itself.
 */
class HttpVirtualUser extends ConnectionBase {
  send(): void {
    this.messageError("other", "an HTTP flow sends by its messages' requests");
  }

  protected shutdown(): void {
    this.ended({ reason: "closed by the client" });
  }
}

export const httpDriver: Driver = {
  protocol: "http",
  connect(opts: ConnectOptions): Promise<Connection> {
    if (opts.listen !== undefined) return Promise.resolve(new HttpVirtualUser());
    const options = opts.http ?? httpOptionsSchema.parse({});
    const url = new URL(opts.url);
    const connector = buildConnector({
      timeout: opts.connectTimeoutMs,
      ...(opts.localAddress ? { localAddress: opts.localAddress } : {}),
      ...(opts.lookup ? { lookup: opts.lookup } : {}),
    });
    const target = {
      hostname: url.hostname.replace(/^\[|\]$/g, ""),
      host: url.host,
      protocol: url.protocol,
      port: url.port || (url.protocol === "https:" ? "443" : "80"),
      servername: url.hostname,
    };
    // The socket (TCP, and TLS for https) is made here so connect time is what the engine measures;
    // undici takes it for the first request and makes new ones itself after a server close (and,
    // without keep-alive, for every later request).
    return new Promise((resolve, reject) => {
      connector(target, (err, socket) => {
        if (err || !socket) {
          const { errorClass, detail } = classifyHttpError(err);
          reject(new ConnectError(/timeout/i.test(err?.message ?? "") ? "timeout" : errorClass, detail));
          return;
        }
        let first: Socket | undefined = socket;
        const client = new Client(url.origin, {
          pipelining: options.pipelining,
          headersTimeout: 0,
          bodyTimeout: 0,
          connect: (o, cb) => {
            const s = first;
            first = undefined;
            // undici expects the callback after its connect() returned, as a real connector does.
            if (s && !s.destroyed) setImmediate(() => cb(null, s));
            else connector(o, cb);
          },
        });
        const own: Record<string, string> = options.body === undefined ? { "content-type": "application/octet-stream" } : {};
        resolve(new HttpConnection(client, url, options, withHeaders(opts, own)));
      });
    });
  },
};
