import { WebSocket, type RawData } from "ws";
import { ConnectError, type ErrorClass } from "./connect-error";
import { ConnectionBase } from "./connection-base";
import type { ConnectOptions, Connection, Driver } from "./driver";
import { withRoom } from "./room-url";

const REFUSED = new Set(["ECONNREFUSED"]);
const TIMED_OUT = new Set(["ETIMEDOUT", "ESOCKETTIMEDOUT"]);
const CLOSED = new Set(["ECONNRESET", "EPIPE"]);

/** Maps a socket or ws error to an error class. */
export function classifyWsError(err: NodeJS.ErrnoException): { errorClass: ErrorClass; detail: string } {
  const code = err.code ?? "";
  if (REFUSED.has(code)) return { errorClass: "refused", detail: code };
  if (TIMED_OUT.has(code)) return { errorClass: "timeout", detail: code };
  if (CLOSED.has(code) || /socket hang up/i.test(err.message)) return { errorClass: "closed", detail: code || err.message };
  // ws validates the upgrade answer itself; anything it rejects there or in framing is the peer's protocol fault.
  if (code.startsWith("WS_ERR_") || /Sec-WebSocket|subprotocol|extension|Invalid WebSocket frame/i.test(err.message)) {
    return { errorClass: "protocol", detail: err.message };
  }
  return { errorClass: "other", detail: code ? `${code}: ${err.message}` : err.message };
}

class WsConnection extends ConnectionBase {
  private errorClass: ErrorClass | undefined;

  constructor(
    private readonly ws: WebSocket,
    /** target.ws.frames "text" (Volley's own messages only): bytes travel as base64 text frames. */
    private readonly base64: boolean,
  ) {
    super();
    ws.on("message", (data: RawData, isBinary: boolean) => {
      // binaryType is "nodebuffer", so data is one Buffer.
      const buf = data as Buffer;
      if (isBinary) this.deliver(buf);
      else this.deliver(this.base64 ? Buffer.from(buf.toString("latin1"), "base64") : buf.toString("utf8"));
    });
    ws.on("error", (err: NodeJS.ErrnoException) => {
      this.errorClass ??= classifyWsError(err).errorClass;
    });
    ws.on("close", (code: number, reason: Buffer) => this.ended({ code, reason: reason.toString("utf8") }, this.errorClass));
  }

  send(payload: Buffer | string): void {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    this.ws.send(this.base64 && typeof payload !== "string" ? payload.toString("base64") : payload);
  }

  protected shutdown(): void {
    // Sends still buffered (an aborted, overloaded run): the close frame would wait behind them and
    // the server would go on receiving load after the run ended. Drop them with the socket.
    if (this.ws.bufferedAmount > 0) return this.ws.terminate();
    this.ws.close(1000);
    // A peer that never answers the close frame must not hold the socket for ws's 30 s close timeout.
    setTimeout(() => this.ws.terminate(), 2000).unref();
  }
}

/**
 * Raw WebSocket (RFC 6455) via the `ws` package; `room` joins through `?room=` on the URL. Flows
 * use ConnectionBase's emit/onEvent: a text or JSON body goes out as a text frame, bytes as a
 * binary frame, and every incoming frame is a message without an event (text as a string).
 */
export const wsDriver: Driver = {
  protocol: "ws",
  connect(opts: ConnectOptions): Promise<Connection> {
    return new Promise((resolve, reject) => {
      // A room is a query parameter: the server joins the socket before it answers the upgrade.
      // Subprotocols (graphql-transport-ws, mqtt…): ws fails the handshake when the server picks none of them.
      const ws = new WebSocket(withRoom(opts.url, opts.room), opts.ws?.subprotocols ?? [], {
        headers: opts.headers,
        perMessageDeflate: opts.perMessageDeflate ?? false,
        localAddress: opts.localAddress,
        ...(opts.lookup ? { lookup: opts.lookup } : {}),
        // Load tests measure the server, not redirects the user did not ask for.
        followRedirects: false,
      });
      let settled = false;
      const fail = (errorClass: ErrorClass, detail: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        ws.terminate();
        reject(new ConnectError(errorClass, detail));
      };
      const timer = setTimeout(() => fail("timeout", `no answer in ${opts.connectTimeoutMs} ms`), opts.connectTimeoutMs);
      ws.on("unexpected-response", (_req, res) => {
        res.resume();
        fail("handshake", `HTTP ${res.statusCode ?? "?"}`);
      });
      ws.on("error", (err: NodeJS.ErrnoException) => {
        const { errorClass, detail } = classifyWsError(err);
        fail(errorClass, detail);
      });
      ws.once("close", () => fail("closed", "closed before the handshake completed"));
      ws.once("open", () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        ws.removeAllListeners("unexpected-response");
        ws.removeAllListeners("error");
        ws.removeAllListeners("close");
        // Flows speak the application's own frames; base64 text is for Volley's binary messages only.
        resolve(new WsConnection(ws, opts.ws?.frames === "text" && !opts.listen));
      });
    });
  },
};
