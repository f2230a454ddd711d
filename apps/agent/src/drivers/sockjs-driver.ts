import { sockjsOptionsSchema } from "@volley/contracts";
import { ConnectError, type ErrorClass } from "./connect-error";
import { ConnectionBase } from "./connection-base";
import type { ConnectOptions, Connection, Driver } from "./driver";
import { withRoom } from "./room-url";
import { closeRequestContext, SockJSClient as SockJS, sockjsRequests, type Sock, type SockjsRequestContext } from "./sockjs-client-loader";
import { probeSockjsInfo, usableTransports } from "./sockjs-common";

/**
 * SockJS frames carry text only. With `encoding: base64` (Volley's own binary messages, against
 * its reference echo) messages travel as base64 text and replies are decoded back to a Buffer: the
 * engine's codec never learns about it. With `text` (a flow: the app's own JSON or text) messages
 * go as they are and replies arrive as the text the app wrote, to be matched like any other.
 */
function decodeReply(data: unknown, encoding: "text" | "base64"): Buffer | string {
  const text = typeof data === "string" ? data : String(data);
  return encoding === "base64" ? Buffer.from(text, "base64") : text;
}

class SockjsConnection extends ConnectionBase {
  constructor(
    private readonly sock: Sock,
    private readonly context: SockjsRequestContext,
    private readonly encoding: "text" | "base64",
  ) {
    super();
    // What the server writes as the session opens (a chat's welcome) arrives before the engine's
    // handler is attached: kept and handed over then, as any later message, not dropped.
    this.deliver = (data) => void this.early?.push(data);
    sock.onmessage = (e) => this.deliver(decodeReply(e.data, encoding));
    // 1002 and 2xxx are sockjs-client's own codes for a lost or broken transport.
    sock.onclose = (e) => {
      closeRequestContext(this.context);
      this.ended({ code: e.code, reason: e.reason }, e.code === 1002 || (e.code >= 2000 && e.code < 3000) ? "protocol" : "closed");
    };
  }

  /** Messages that arrived before a handler was attached (null once one is). */
  private early: (Buffer | string)[] | null = [];

  override onMessage(cb: (data: Buffer | string) => void): void {
    super.onMessage(cb);
    this.flushEarly();
  }

  override onEvent(cb: (event: string | undefined, data: unknown) => void): void {
    super.onEvent(cb);
    this.flushEarly();
  }

  private flushEarly(): void {
    const early = this.early ?? [];
    this.early = null;
    for (const data of early) this.deliver(data);
  }

  send(payload: Buffer | string): void {
    if (this.sock.readyState !== SockJS.OPEN) return;
    // xhr transports POST each send: inside the connection's context, so it resolves through its lookup.
    const text = typeof payload === "string" ? payload : payload.toString(this.encoding === "base64" ? "base64" : "utf8");
    sockjsRequests.run(this.context, () => this.sock.send(text));
  }

  protected shutdown(): void {
    sockjsRequests.run(this.context, () => this.sock.close(1000));
    closeRequestContext(this.context);
  }
}

/**
 * SockJS via sockjs-client in Node, on the transports the plan allows, target.headers on every
 * request of the session (a log-in's cookie); `room` joins through `?room=`.
 */
export const sockjsDriver: Driver = {
  protocol: "sockjs",
  connect(opts: ConnectOptions): Promise<Connection> {
    const { transports, encoding = "base64" } = opts.sockjs ?? sockjsOptionsSchema.parse({});
    const startedAt = performance.now();
    // sockjs-client keeps the query on every transport URL, so the session opens already in the room.
    const url = withRoom(opts.url, opts.room);
    const lookup = opts.lookup;
    // Hosted mode: every socket of the connection (the /info probe, the websocket or xhr transport,
    // each xhr send) resolves through opts.lookup, by the context it runs in (sockjs-client-loader.ts).
    // sockjs-client's eventsource transport opens its stream with no way to pass one: left out then.
    let usable: string[];
    try {
      usable = usableTransports(transports, lookup, "target.sockjs.transports");
    } catch (err) {
      return Promise.reject(err);
    }
    const context: SockjsRequestContext = { ...(lookup ? { lookup } : {}), ...(opts.headers ? { headers: opts.headers } : {}) };
    return new Promise((resolve, reject) => {
      let sock: Sock;
      try {
        sock = sockjsRequests.run(context, () => new SockJS(url, undefined, { transports: usable, timeout: opts.connectTimeoutMs }));
      } catch (err) {
        reject(new ConnectError("other", err instanceof Error ? err.message : String(err)));
        return;
      }
      let settled = false;
      const fail = (errorClass: ErrorClass, detail: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        sock.onopen = sock.onclose = null;
        sock.close();
        closeRequestContext(context);
        reject(new ConnectError(errorClass, detail));
      };
      const timer = setTimeout(() => fail("timeout", `no answer in ${opts.connectTimeoutMs} ms`), opts.connectTimeoutMs);
      sock.onclose = (e) => {
        if (settled) return;
        const left = Math.max(100, opts.connectTimeoutMs - (performance.now() - startedAt));
        void probeSockjsInfo(url, left, lookup, opts.headers).then((found) => {
          fail(found?.errorClass ?? "handshake", found?.detail ?? `${e.reason || "closed"} (SockJS ${e.code})`);
        });
      };
      sock.onopen = () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        sock.onopen = sock.onclose = null;
        resolve(new SockjsConnection(sock, context, encoding));
      };
    });
  },
};
