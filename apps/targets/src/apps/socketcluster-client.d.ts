/**
 * The slice of socketcluster-client 20 the pingpong app's test uses; the package ships no types.
 * Referenced with a triple-slash directive from socketcluster-pingpong.test.ts.
 */
declare module "socketcluster-client" {
  interface ConsumableStream<T> extends AsyncIterable<T> {
    once(timeout?: number): Promise<T>;
  }

  export interface AGClientSocket {
    state: "connecting" | "open" | "closed";
    listener(name: "connect"): ConsumableStream<{ id: string }>;
    transmit(event: string, data?: unknown): Promise<void>;
    receiver(name: string): ConsumableStream<unknown>;
    disconnect(code?: number, reason?: string): void;
  }

  export function create(options: { hostname: string; port: number; path: string; secure?: boolean; autoReconnect?: boolean }): AGClientSocket;
}
