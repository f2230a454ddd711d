/**
 * The slice of socketcluster-server 20 the reference target uses; the package ships no types.
 * Referenced with a triple-slash directive from socketcluster-echo-server.ts so every program that
 * compiles the target (the agent's tests import it) sees it.
 */
declare module "socketcluster-server" {
  import type { IncomingMessage, Server } from "node:http";

  /** SocketCluster's async-iterable streams (listeners, receivers, procedures). */
  interface ConsumableStream<T> extends AsyncIterable<T> {
    once(timeout?: number): Promise<T>;
  }

  export interface AGRequest {
    procedure: string;
    data: unknown;
    end(data?: unknown): void;
    error(err: Error, data?: unknown): void;
  }

  export interface AGServerSocket {
    id: string;
    state: "connecting" | "open" | "closed";
    /** The HTTP upgrade request the socket came from. */
    request: IncomingMessage;
    procedure(name: string): ConsumableStream<AGRequest>;
    receiver(name: string): ConsumableStream<unknown>;
    transmit(event: string, data?: unknown): Promise<void>;
    disconnect(code?: number, reason?: string): void;
    listener(name: "close"): ConsumableStream<{ code: number; reason?: string }>;
  }

  export interface AGServer {
    clientsCount: number;
    listener(name: "connection"): ConsumableStream<{ socket: AGServerSocket }>;
    listener(name: "error" | "warning"): ConsumableStream<{ error: Error }>;
    /** Terminates every client unless asked to keep them open. */
    close(keepSocketsOpen?: boolean): Promise<void>;
  }

  export interface AGServerOptions {
    path?: string;
    perMessageDeflate?: boolean;
    pingInterval?: number;
    pingTimeout?: number;
    allowClientPublish?: boolean;
  }

  export function attach(server: Server, options?: AGServerOptions): AGServer;
}
