import { httpMethodCarriesBody, httpOptionsSchema, type HttpOptions } from "@volley/contracts";
import { ConnectError } from "./connect-error";
import { ConnectionBase } from "./connection-base";
import type { ConnectOptions, Connection, Driver } from "./driver";
import { classifyHttpError, withHeaders } from "./http-common";
import { KeepAliveHttpConnection } from "./http-keep-alive";
import { OneShotHttpConnection, openTimedSocket, type OneShotTarget } from "./http-one-shot";

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

/**
 * Plain HTTP request/response: a message is one request, and its reply is the complete response
 * with a 2xx status. The message itself is handed back as the reply (request body or not), so any
 * endpoint can be timed, echo or not; any other status is a per-message error of class "protocol"
 * ("HTTP 503"); redirects are never followed (a 3xx is such an error). A load connection is one
 * kept-alive socket (http-keep-alive.ts), or with `keepAlive: false` a virtual user whose every
 * request opens its own (http-one-shot.ts). The first socket is made in connect(), so connect time
 * (TCP, and TLS for https) is what the engine measures.
 */
export const httpDriver: Driver = {
  protocol: "http",
  connect(opts: ConnectOptions): Promise<Connection> {
    if (opts.listen !== undefined) return Promise.resolve(new HttpVirtualUser());
    const options = opts.http ?? httpOptionsSchema.parse({});
    const url = new URL(opts.url);
    const tls = url.protocol === "https:";
    const target: OneShotTarget = {
      host: url.hostname.replace(/^\[|\]$/g, ""),
      port: Number(url.port || (tls ? 443 : 80)),
      tls,
      servername: url.hostname,
      connectTimeoutMs: opts.connectTimeoutMs,
      ...(opts.localAddress ? { localAddress: opts.localAddress } : {}),
      ...(opts.lookup ? { lookup: opts.lookup } : {}),
    };
    // The message itself is the body only when the plan gives none and the method carries one.
    const own: Record<string, string> =
      options.body === undefined && httpMethodCarriesBody(options.method) ? { "content-type": "application/octet-stream" } : {};
    const headers = withHeaders(opts, own);
    if (options.keepAlive) return KeepAliveHttpConnection.open(target, options, url, headers);
    return connectOneShot(target, url, options, headers);
  },
};

/** keepAlive: false — the first request's socket is the connect the engine times; later requests each open their own. */
function connectOneShot(target: OneShotTarget, url: URL, options: HttpOptions, headers: Record<string, string>): Promise<Connection> {
  return new Promise((resolve, reject) => {
    const socket = openTimedSocket(target, undefined, (connectUs) => {
      clearTimeout(timer);
      socket.off("error", onError);
      // Until the first request takes it, a close or reset of the idle socket is nobody's error.
      socket.on("error", () => {});
      resolve(new OneShotHttpConnection(target, socket, connectUs, url, options, headers));
    });
    const timer = setTimeout(() => socket.destroy(Object.assign(new Error("connect timed out"), { code: "UND_ERR_CONNECT_TIMEOUT" })), target.connectTimeoutMs);
    const onError = (err: Error) => {
      clearTimeout(timer);
      const { errorClass, detail } = classifyHttpError(err);
      reject(new ConnectError(errorClass, detail));
    };
    socket.once("error", onError);
  });
}
