import { durationMs, sockjsOptionsSchema, type Target } from "@volley/contracts";
import type { ConnectOptions } from "./driver";

/**
 * The driver's view of a plan's target: every protocol's options block passed through, so a new
 * protocol needs no change where connections are made. `room` and `localAddress` are per connection;
 * `flow`: the connection carries a plan flow (SockJS then defaults to text, not base64).
 */
export function connectOptionsFor(target: Target, extra: Pick<ConnectOptions, "room" | "localAddress" | "lookup"> = {}, flow = false): ConnectOptions {
  return {
    url: target.url,
    headers: target.headers,
    connectTimeoutMs: durationMs(target.connectTimeout),
    perMessageDeflate: target.ws?.perMessageDeflate,
    ws: target.ws,
    socketio: target.socketio,
    // A flow's messages are the app's own text; Volley's own binary messages go as base64.
    sockjs:
      target.protocol === "sockjs"
        ? { ...sockjsOptionsSchema.parse(target.sockjs ?? {}), encoding: target.sockjs?.encoding ?? (flow ? "text" : "base64") }
        : target.sockjs,
    stomp: target.stomp,
    sse: target.sse,
    polling: target.polling,
    http: target.http,
    socketcluster: target.socketcluster,
    mqtt: target.mqtt,
    ...extra,
  };
}
