import type { Pool } from "undici";
import { ConnectError, type ErrorClass } from "./connect-error";
import { ConnectionBase } from "./connection-base";
import type { ConnectOptions, Connection, PollOut, PollSource } from "./driver";
import { connectionPool } from "./connection-pool";
import { classifyHttpError, pathOf, redirectDetail, withHeaders } from "./http-common";

type EventCb = (event: string | undefined, data: unknown) => void;

/**
 * Flows on polling targets: the application's own poll (target.polling.poll, rendered by the flow
 * each time) in a loop on the connection's own socket, as a browser tab polls — long polling asks
 * again as soon as an answer is in, short polling `intervalMs` after. Every message of an answer
 * goes to the flow (no event). Nothing is sent on it: a flow publishes by its messages' requests.
 */
class PollLoopConnection extends ConnectionBase {
  private timer: NodeJS.Timeout | undefined;
  private eventCb: EventCb | undefined;
  /** Messages of an answer that came before the flow listened (none in practice: it listens on open). */
  private early: unknown[] = [];

  constructor(
    private readonly pool: Pool,
    private readonly origin: string,
    private readonly source: PollSource,
    private readonly headers: Record<string, string>,
    private readonly intervalMs: number | undefined,
  ) {
    super();
  }

  /** Sends the first poll (after the caller has its close handler in place). */
  start(): void {
    this.poll();
  }

  override onEvent(cb: EventCb): void {
    this.eventCb = cb;
    for (const m of this.early.splice(0)) cb(undefined, m);
  }

  send(): void {
    this.messageError("other", "a poll connection sends nothing itself: give the flow's messages a request");
  }

  private readonly poll = (): void => {
    this.timer = undefined;
    if (this.closingByUs) return;
    let out: PollOut;
    try {
      out = this.source.next();
    } catch (err) {
      return this.end("other", `poll: ${(err as Error).message}`);
    }
    const url = new URL(out.url);
    if (url.origin !== this.origin)
      return this.end("other", `poll URL ${url.origin} is not target.url's origin ${this.origin}: make it relative to target.url`);
    this.pool.request({ method: out.method as "GET", path: pathOf(url), headers: { ...this.headers, ...out.headers }, body: out.body }).then(
      async (res) => {
        const text = await res.body.text();
        if (this.closingByUs) return;
        if (res.statusCode < 200 || res.statusCode >= 300) {
          const why = redirectDetail(res.statusCode, res.headers.location) ?? `HTTP ${res.statusCode}`;
          return this.end(
            res.statusCode === 404 || res.statusCode === 410 ? "closed" : "protocol",
            `poll answered ${why}${text ? `: ${text.slice(0, 200)}` : ""}`,
          );
        }
        let messages: unknown[];
        try {
          messages = this.source.read(text);
        } catch (err) {
          return this.end("protocol", (err as Error).message);
        }
        for (const m of messages) {
          if (this.eventCb) this.eventCb(undefined, m);
          else this.early.push(m);
        }
        if (this.intervalMs === undefined) this.poll();
        else this.timer = setTimeout(this.poll, this.intervalMs);
      },
      (err: unknown) => {
        if (this.closingByUs) return;
        const { errorClass, detail } = classifyHttpError(err);
        this.end(errorClass, detail);
      },
    );
  };

  private end(errorClass: ErrorClass, reason: string): void {
    if (this.timer) clearTimeout(this.timer);
    void this.pool.destroy().catch(() => {});
    this.ended({ reason }, errorClass);
  }

  protected shutdown(): void {
    if (this.timer) clearTimeout(this.timer);
    // A held poll is dropped with its socket; the server releases it on the close.
    void this.pool.destroy().catch(() => {});
    this.ended({ reason: "closed by the client" });
  }
}

/**
 * Starts the loop; open once the first poll's socket is connected (a long poll's answer may be held
 * for as long as the server likes, so it is not waited for). The session itself is whatever the
 * setup requests made, timed as setup.<name>; a poll that fails later ends the connection with its
 * error class.
 */
export function connectPollLoop(opts: ConnectOptions, intervalMs: number | undefined): Promise<Connection> {
  const source = opts.poll;
  if (!source) {
    return Promise.reject(new ConnectError("other", "a flow on a polling target polls the application's own route: add target.polling.poll"));
  }
  const pool = connectionPool(opts, 1);
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (err?: ConnectError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      pool.off("connect", onConnect);
      pool.off("connectionError", onError);
      if (!err) return resolve(conn);
      conn.close();
      reject(err);
    };
    const onConnect = () => settle();
    const onError = (_origin: unknown, _targets: unknown, err: Error) => {
      const { errorClass, detail } = classifyHttpError(err);
      settle(new ConnectError(/timeout/i.test(err.message) ? "timeout" : errorClass, detail));
    };
    const timer = setTimeout(() => settle(new ConnectError("timeout", `no answer in ${opts.connectTimeoutMs} ms`)), opts.connectTimeoutMs);
    pool.on("connect", onConnect);
    pool.on("connectionError", onError);
    const conn = new PollLoopConnection(pool, new URL(opts.url).origin, source, withHeaders(opts, {}), intervalMs);
    // A poll that cannot even be made (its URL on another origin) fails the connect with its reason.
    conn.onClose((info) => settle(new ConnectError(info.errorClass ?? "closed", info.reason ?? "closed")));
    conn.start();
  });
}
