import { durationMs, pollingOptionsSchema } from "@volley/contracts";
import type { Pool } from "undici";
import { ConnectError, type ErrorClass } from "./connect-error";
import { ConnectionBase } from "./connection-base";
import type { ConnectOptions, Connection, Driver } from "./driver";
import { connectionPool } from "./connection-pool";
import { classifyHttpError, isTransportError, pathOf, redirectDetail, withHeaders, withRoom } from "./http-common";
import { connectPollLoop } from "./poll-loop";

type Mode = "long" | "short";

/** `<target.url path>/<route>?session=<id>`: the reference target's polling routes. */
function routeOf(base: URL, route: string, session?: string): string {
  const u = new URL(base);
  u.pathname = `${base.pathname.replace(/\/$/, "")}/${route}`;
  u.search = "";
  if (session) u.searchParams.set("session", session);
  return pathOf(u);
}

/**
 * HTTP polling as the reference target speaks it: POST `<url>/open` answers `{session}`, messages
 * go by POST `<url>/send`, and GET `<url>/receive?wait=<ms>` answers `{messages: [base64...]}`.
 * Long polling keeps one receive outstanding that the server holds until a message is ready;
 * short polling asks with wait=0 every `polling.interval`, so a reply waits up to that long. In a
 * flow (`opts.listen` set) it polls the application's own route instead (poll-loop.ts).
 */
class PollingConnection extends ConnectionBase {
  private readonly sendPath: string;
  private readonly receivePath: string;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly base: URL,
    private readonly session: string,
    private readonly mode: Mode,
    private readonly intervalMs: number,
    waitMs: number,
    private readonly headers: Record<string, string>,
  ) {
    super();
    this.sendPath = routeOf(base, "send", session);
    const receive = new URL(routeOf(base, "receive", session), base);
    receive.searchParams.set("wait", String(mode === "long" ? waitMs : 0));
    this.receivePath = pathOf(receive);
    this.poll();
  }

  private poll = (): void => {
    this.timer = undefined;
    if (this.closingByUs) return;
    this.pool.request({ method: "GET", path: this.receivePath, headers: this.headers }).then(
      async (res) => {
        const text = await res.body.text();
        if (this.closingByUs) return;
        if (res.statusCode === 404 || res.statusCode === 410) return this.end("closed", `session ended (HTTP ${res.statusCode})`);
        if (res.statusCode !== 200)
          return this.end("protocol", `${redirectDetail(res.statusCode, res.headers.location) ?? `HTTP ${res.statusCode}`} on receive`);
        let messages: unknown;
        try {
          messages = (JSON.parse(text) as { messages?: unknown }).messages;
        } catch {
          messages = undefined;
        }
        if (!Array.isArray(messages)) return this.end("protocol", "receive answered without a messages array");
        for (const m of messages) this.deliver(typeof m === "string" ? Buffer.from(m, "base64") : JSON.stringify(m));
        if (this.mode === "long") this.poll();
        else this.timer = setTimeout(this.poll, this.intervalMs);
      },
      (err: unknown) => {
        if (this.closingByUs) return;
        const { errorClass, detail } = classifyHttpError(err);
        this.end(errorClass, detail);
      },
    );
  };

  send(payload: Buffer | string): void {
    if (this.closingByUs) return;
    this.pool.request({ method: "POST", path: this.sendPath, body: payload, headers: this.headers }).then(
      async (res) => {
        await res.body.dump();
        if (res.statusCode === 404 || res.statusCode === 410) this.end("closed", `session ended (HTTP ${res.statusCode})`);
        else if (res.statusCode >= 300)
          this.messageError("protocol", `${redirectDetail(res.statusCode, res.headers.location) ?? `HTTP ${res.statusCode}`} on send`);
      },
      (err: unknown) => {
        if (this.closingByUs) return;
        const { errorClass, detail } = classifyHttpError(err);
        if (isTransportError(errorClass)) this.end(errorClass, detail);
        else this.messageError(errorClass, detail);
      },
    );
  }

  private end(errorClass: ErrorClass, reason: string): void {
    if (this.timer) clearTimeout(this.timer);
    void this.pool.destroy();
    this.ended({ reason }, errorClass);
  }

  protected shutdown(): void {
    if (this.timer) clearTimeout(this.timer);
    // Tell the server, so the session does not linger until its idle sweep; then drop the sockets.
    const bye = this.pool.request({ method: "POST", path: routeOf(this.base, "close", this.session), headers: this.headers });
    void bye
      .then((res) => res.body.dump())
      .catch(() => {})
      .finally(() => void this.pool.destroy().catch(() => {}));
    this.ended({ reason: "closed by the client" });
  }
}

function pollingDriver(mode: Mode): Driver {
  return {
    protocol: mode === "long" ? "long-polling" : "short-polling",
    async connect(opts: ConnectOptions): Promise<Connection> {
      const options = opts.polling ?? pollingOptionsSchema.parse({});
      if (opts.listen !== undefined) return connectPollLoop(opts, mode === "long" ? undefined : durationMs(options.interval));
      const base = new URL(withRoom(opts.url, opts.room));
      const pool = connectionPool(opts, 2);
      const headers = withHeaders(opts, {});
      const open = new URL(routeOf(base, "open"), base);
      open.search = base.search; // delay, room: the server reads them when the session opens
      const timeout = AbortSignal.timeout(opts.connectTimeoutMs);
      try {
        const res = await pool.request({ method: "POST", path: pathOf(open), headers, signal: timeout });
        const text = await res.body.text();
        if (res.statusCode !== 200) throw new ConnectError("handshake", redirectDetail(res.statusCode, res.headers.location) ?? `HTTP ${res.statusCode}`);
        const session = (JSON.parse(text) as { session?: unknown }).session;
        if (typeof session !== "string" || session === "") throw new ConnectError("protocol", "open answered without a session id");
        return new PollingConnection(
          pool,
          base,
          session,
          mode,
          durationMs(options.interval),
          durationMs(options.wait),
          withHeaders(opts, { "content-type": "application/octet-stream" }),
        );
      } catch (err) {
        void pool.destroy().catch(() => {});
        if (err instanceof ConnectError) throw err;
        if (timeout.aborted) throw new ConnectError("timeout", `no answer in ${opts.connectTimeoutMs} ms`);
        if (err instanceof SyntaxError) throw new ConnectError("protocol", "open answered with something other than JSON");
        const { errorClass, detail } = classifyHttpError(err);
        throw new ConnectError(errorClass, detail);
      }
    },
  };
}

export const longPollingDriver = pollingDriver("long");
export const shortPollingDriver = pollingDriver("short");
