import { durationMs, type Target } from "@volley/contracts";
import type { ConnectOptions } from "./driver";

/**
 * The driver's view of a plan's target: every protocol's options block passed through, so a new
 * protocol needs no change where connections are made. `room` and `localAddress` are per connection.
 */
export function connectOptionsFor(target: Target, extra: Pick<ConnectOptions, "room" | "localAddress" | "lookup"> = {}): ConnectOptions {
  return {
    url: target.url,
    headers: target.headers,
    connectTimeoutMs: durationMs(target.connectTimeout),
    perMessageDeflate: target.ws?.perMessageDeflate,
    ws: target.ws,
    socketio: target.socketio,
    sockjs: target.sockjs,
    stomp: target.stomp,
    sse: target.sse,
    polling: target.polling,
    http: target.http,
    socketcluster: target.socketcluster,
    ...extra,
  };
}
