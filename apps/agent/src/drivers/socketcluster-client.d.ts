/**
 * The slice of socketcluster-client 20 the socketcluster driver uses; the package ships no types.
 * Referenced with a triple-slash directive from socketcluster-driver.ts.
 */
declare module "socketcluster-client" {
  import type { ClientOptions, WebSocket } from "ws";

  /** SocketCluster's async-iterable streams (listeners, receivers, channels). */
  interface ConsumableStream<T> extends AsyncIterable<T> {
    once(timeout?: number): Promise<T>;
  }

  export interface AGChannel extends ConsumableStream<unknown> {
    readonly name: string;
    listener(name: "subscribe"): ConsumableStream<{ subscriptionOptions: unknown }>;
    listener(name: "subscribeFail"): ConsumableStream<{ error: Error }>;
  }

  export interface CloseEvent {
    code: number;
    reason?: string;
  }

  export interface AGClientSocket {
    state: "connecting" | "open" | "closed";
    /** Internal, but the only way to the `ws` socket's own error (ECONNREFUSED, HTTP status). */
    transport?: { socket: WebSocket };
    /** Internal: every inbound transmit passes here (looked up per message), the only catch-all. */
    _onInboundTransmit?: (event: string, data: unknown) => void;
    listener(name: "connect"): ConsumableStream<{ id: string }>;
    listener(name: "connectAbort" | "disconnect" | "close"): ConsumableStream<CloseEvent>;
    listener(name: "error"): ConsumableStream<{ error: Error }>;
    invoke(event: string, data?: unknown): Promise<unknown>;
    transmit(event: string, data?: unknown): Promise<void>;
    transmitPublish(channel: string, data?: unknown): Promise<void>;
    receiver(name: string): ConsumableStream<unknown>;
    subscribe(channel: string): AGChannel;
    disconnect(code?: number, reason?: string): void;
    closeAllListeners(): void;
    closeAllReceivers(): void;
    closeAllChannels(): void;
  }

  export interface AGClientOptions {
    hostname: string;
    port: number;
    path: string;
    secure: boolean;
    /** A query string ("delay=20") or an object of parameters. */
    query?: string | Record<string, string>;
    autoConnect?: boolean;
    autoReconnect?: boolean;
    connectTimeout?: number;
    ackTimeout?: number;
    /** Passed to `new WebSocket(url, [], wsOptions)`. */
    wsOptions?: ClientOptions;
  }

  export function create(options: AGClientOptions): AGClientSocket;
}
