import { httpOptionsSchema, type HttpOptions } from "@volley/contracts";
import { buildConnector, Client } from "undici";
import type { Socket } from "node:net";
import { ConnectError, type ErrorClass } from "./connect-error";
import { ConnectionBase } from "./connection-base";
import type { ConnectOptions, Connection, Driver } from "./driver";
import { classifyHttpError, isTransportError, pathOf, withHeaders } from "./http-common";

const NO_BODY = new Set(["GET", "HEAD", "DELETE"]);

/**
 * Plain HTTP request/response: a load connection is one keep-alive socket (undici Client), a
 * message is one request, and its reply is the complete response with a 2xx status. The message
 * itself is handed back as the reply (request body or not), so any endpoint can be timed, echo or
 * not; any other status is a per-message error of class "protocol" ("HTTP 503").
 */
class HttpConnection extends ConnectionBase {
  private readonly path: string;
  private readonly method: HttpOptions["method"];
  private readonly fixedBody: string | undefined;
  private readonly hasBody: boolean;

  constructor(
    private readonly client: Client,
    url: URL,
    options: HttpOptions,
    private readonly headers: Record<string, string>,
  ) {
    super();
    this.path = pathOf(url);
    this.method = options.method;
    this.fixedBody = options.body;
    this.hasBody = !NO_BODY.has(options.method);
  }

  send(payload: Buffer | string): void {
    if (this.closingByUs) return;
    const body = this.hasBody ? (this.fixedBody ?? payload) : undefined;
    this.client.request({ method: this.method, path: this.path, headers: this.headers, body }).then(
      async (res) => {
        await res.body.dump({ limit: Infinity });
        if (this.closingByUs) return;
        if (res.statusCode >= 200 && res.statusCode < 300) this.deliver(payload);
        else this.messageError("protocol", `HTTP ${res.statusCode}`);
      },
      (err: unknown) => {
        if (this.closingByUs) return;
        const { errorClass, detail } = classifyHttpError(err);
        // A socket that is refused or dropped ends this connection, as a disconnect would.
        if (isTransportError(errorClass)) this.end(errorClass, detail);
        else this.messageError(errorClass, detail);
      },
    );
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
    // undici takes it for the first request and makes new ones itself after a server close.
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
