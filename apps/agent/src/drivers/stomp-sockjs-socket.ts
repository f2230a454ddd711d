import type { IStompSocket } from "@stomp/stompjs";
import type { ErrorClass } from "./connect-error";
import type { ConnectOptions } from "./driver";
import { closeRequestContext, SockJSClient as SockJS, sockjsRequests, type SockjsRequestContext } from "./sockjs-client-loader";
import { probeSockjsInfo, sockjsInfoUrl, usableTransports } from "./sockjs-common";

const DEFAULT_TRANSPORTS = ["websocket", "xhr-streaming", "xhr-polling"];

/**
 * The SockJS side of one STOMP-over-SockJS connection (an http(s):// STOMP URL: Spring's `/ws`
 * with SockJS enabled): stompjs's `webSocketFactory` gets a sockjs-client session from Volley's
 * own copy (sockjs-client-loader.ts), so in hosted mode every socket of it (the /info probe, the
 * websocket or xhr transport, each xhr send) resolves through ConnectOptions.lookup. stompjs
 * sends from the engine's timers, outside the context the session was opened in: its send and
 * close are put back inside it. Throws a ConnectError when hosted mode leaves no transport.
 */
export class StompSockjsSocket {
  private readonly context: SockjsRequestContext;
  private readonly transports: string[];
  private readonly startedAt = performance.now();

  constructor(
    private readonly url: string,
    transports: readonly string[] | undefined,
    private readonly opts: ConnectOptions,
  ) {
    this.transports = usableTransports(transports ?? DEFAULT_TRANSPORTS, opts.lookup, "target.stomp.transports");
    this.context = { ...(opts.lookup ? { lookup: opts.lookup } : {}), ...(opts.headers ? { headers: opts.headers } : {}) };
  }

  /** stompjs's webSocketFactory (called once: the driver never reconnects). */
  readonly factory = (): IStompSocket => {
    const { context } = this;
    const sock = sockjsRequests.run(context, () => new SockJS(this.url, undefined, { transports: this.transports, timeout: this.opts.connectTimeoutMs }));
    const { send, close } = sock;
    sock.send = (data) => sockjsRequests.run(context, () => send.call(sock, data));
    sock.close = (code) => sockjsRequests.run(context, () => close.call(sock, code));
    return sock as unknown as IStompSocket;
  };

  /**
   * Why the session closed before CONNECTED: sockjs-client says only "Cannot connect to server",
   * so the endpoint's /info is asked. Something that answers, but not as SockJS, is most often a
   * plain WebSocket STOMP endpoint given with an http:// URL: the fix says so.
   */
  async failure(e: { code?: number; reason?: string } | undefined): Promise<{ errorClass: ErrorClass; detail: string }> {
    const left = Math.max(100, this.opts.connectTimeoutMs - (performance.now() - this.startedAt));
    const found = await probeSockjsInfo(this.url, left, this.opts.lookup, this.opts.headers);
    if (found?.refused) {
      return {
        errorClass: found.errorClass,
        detail: `the SockJS endpoint refused /info (${found.detail} at ${sockjsInfoUrl(this.url)}): it wants credentials on the HTTP requests, such as the session cookie its log-in sets: give them in target.headers`,
      };
    }
    if (found?.notSockjs) {
      return {
        errorClass: found.errorClass,
        detail: `the endpoint did not answer SockJS /info (${found.detail} at ${sockjsInfoUrl(this.url)}): give the URL of a SockJS endpoint, or a ws:// or wss:// URL if it is a plain WebSocket STOMP endpoint`,
      };
    }
    if (found) return found;
    const why = `${e?.reason || "closed"}${e?.code === undefined ? "" : ` (SockJS ${e.code})`}`;
    return { errorClass: "handshake", detail: `SockJS session closed before CONNECTED: ${why}, on transports ${this.transports.join(", ")}` };
  }

  /** Ends the connection's kept-alive HTTP sockets (xhr transports). */
  dispose(): void {
    closeRequestContext(this.context);
  }
}
