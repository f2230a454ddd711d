import { sseOptionsSchema } from "@volley/contracts";
import { EventSource, type ErrorEvent } from "eventsource";
import { fetch as undiciFetch, type Pool } from "undici";
import { ConnectError, type ErrorClass } from "./connect-error";
import { ConnectionBase } from "./connection-base";
import type { ConnectOptions, Connection, Driver } from "./driver";
import { connectionPool } from "./connection-pool";
import { classifyHttpError, isTransportError, pathOf, redirectDetail, withHeaders, withRoom } from "./http-common";
import { connectSseStream } from "./sse-stream";

/**
 * SSE for server → client, HTTP POST for client → server, as the reference target (apps/targets
 * http-target-server) speaks it: the stream's first event, `event: session`, names the session;
 * messages are POSTed to `sse.publish?session=<id>` (resolved against target.url); each event's
 * data is one message in base64 (an event stream is text). In a flow (`opts.listen` set) it reads
 * the application's own stream instead (sse-stream.ts).
 */
class SseConnection extends ConnectionBase {
  constructor(
    private readonly es: EventSource,
    private readonly pool: Pool,
    private readonly publishPath: string,
    private readonly headers: Record<string, string>,
  ) {
    super();
    es.onmessage = (e) => this.deliver(Buffer.from(e.data, "base64"));
    // eventsource retries a dropped stream by itself; a load test counts the drop instead.
    es.onerror = (e: ErrorEvent) => {
      es.close();
      this.end(e.code ? "protocol" : "closed", e.code ? `HTTP ${e.code}` : e.message || "stream ended");
    };
  }

  send(payload: Buffer | string): void {
    if (this.closingByUs || this.es.readyState !== EventSource.OPEN) return;
    this.pool.request({ method: "POST", path: this.publishPath, body: payload, headers: this.headers }).then(
      async (res) => {
        await res.body.dump();
        if (res.statusCode >= 300) this.messageError("protocol", redirectDetail(res.statusCode, res.headers.location) ?? `HTTP ${res.statusCode}`);
      },
      (err: unknown) => {
        const { errorClass, detail } = classifyHttpError(err);
        if (isTransportError(errorClass)) this.end(errorClass, detail);
        else this.messageError(errorClass, detail);
      },
    );
  }

  private end(errorClass: ErrorClass, reason: string): void {
    this.es.close();
    void this.pool.destroy();
    this.ended({ reason }, errorClass);
  }

  protected shutdown(): void {
    this.es.close();
    void this.pool.destroy();
    this.ended({ reason: "closed by the client" });
  }
}

export const sseDriver: Driver = {
  protocol: "sse",
  connect(opts: ConnectOptions): Promise<Connection> {
    if (opts.listen !== undefined) return connectSseStream(opts);
    const options = opts.sse ?? sseOptionsSchema.parse({});
    const publish = new URL(options.publish, opts.url);
    if (publish.origin !== new URL(opts.url).origin) {
      return Promise.reject(new ConnectError("other", `sse.publish ${publish.href} is not on the stream's origin`));
    }
    const pool = connectionPool(opts, 2);
    let lastError: unknown;
    let redirect: string | undefined;
    const headers = withHeaders(opts, {});
    return new Promise((resolve, reject) => {
      const es = new EventSource(withRoom(opts.url, opts.room), {
        // eventsource asks fetch to follow redirects; we never do (see redirectDetail), and keep the Location for the error.
        fetch: (url, init) =>
          undiciFetch(url, {
            ...init,
            redirect: "manual",
            headers: { ...(init?.headers as Record<string, string>), ...headers },
            dispatcher: pool,
          } as Parameters<typeof undiciFetch>[1]).then(
            (res) => {
              redirect = redirectDetail(res.status, res.headers.get("location"));
              return res;
            },
            (err: unknown) => {
              lastError = err;
              throw err;
            },
          ) as ReturnType<NonNullable<ConstructorParameters<typeof EventSource>[1]>["fetch"] & {}>,
      });
      let settled = false;
      const fail = (errorClass: ErrorClass, detail: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        es.close();
        void pool.destroy();
        reject(new ConnectError(errorClass, detail));
      };
      const timer = setTimeout(() => fail("timeout", `no answer in ${opts.connectTimeoutMs} ms`), opts.connectTimeoutMs);
      es.onerror = (e: ErrorEvent) => {
        if (e.code) return fail("handshake", redirect ?? `HTTP ${e.code}`);
        if (lastError) {
          const { errorClass, detail } = classifyHttpError(lastError);
          return fail(errorClass, detail);
        }
        fail(/content-type/i.test(e.message ?? "") ? "handshake" : "closed", e.message || "stream ended before the session event");
      };
      es.addEventListener("session", (e) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        publish.searchParams.set("session", e.data);
        resolve(new SseConnection(es, pool, pathOf(publish), withHeaders(opts, { "content-type": "application/octet-stream" })));
      });
    });
  },
};
