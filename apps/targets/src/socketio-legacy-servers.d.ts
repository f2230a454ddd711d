/**
 * The slice of Socket.IO v2 and v3 servers the reference echoes use. socket.io-v2 ships no types;
 * socket.io-v3 has them but its package "exports" hide them from TypeScript. Referenced with a
 * triple-slash directive from the two echo servers so every program that compiles them sees it.
 */
declare module "socket.io-v3" {
  import type { Server as HttpServer } from "node:http";

  export interface Socket {
    readonly connected: boolean;
    readonly handshake: { query: Record<string, unknown> };
    emit(event: string, ...args: unknown[]): boolean;
    on(event: "disconnect", listener: () => void): this;
    /** Every incoming event, with the ack function last when the client asked for one. */
    onAny(listener: (event: string, ...args: unknown[]) => void): this;
  }

  export interface Namespace {
    use(fn: (socket: Socket, next: (err?: Error) => void) => void): this;
    on(event: "connection", listener: (socket: Socket) => void): this;
  }

  export class Server {
    constructor(http: HttpServer, options?: { path?: string; serveClient?: boolean; perMessageDeflate?: boolean; httpCompression?: boolean });
    of(nsp: string | RegExp): Namespace;
    engine: { clientsCount: number };
    close(cb?: (err?: Error) => void): void;
  }
}

declare module "socket.io-v2" {
  import type { Server as HttpServer } from "node:http";

  export interface Socket {
    readonly connected: boolean;
    readonly handshake: { query: Record<string, unknown> };
    emit(event: string, ...args: unknown[]): this;
    on(event: "disconnect", listener: () => void): this;
    /** Per-packet middleware (v2 has no onAny): `packet` is [event, ...args], the ack function last when asked for. */
    use(fn: (packet: unknown[], next: (err?: Error) => void) => void): this;
  }

  export interface Namespace {
    use(fn: (socket: Socket, next: (err?: Error) => void) => void): this;
    on(event: "connection", listener: (socket: Socket) => void): this;
  }

  export interface Server {
    of(nsp: string | RegExp): Namespace;
    engine: { clientsCount: number };
    close(cb?: (err?: Error) => void): void;
  }

  /** v2 exports a factory, callable with or without `new`. */
  export default function createServer(
    http: HttpServer,
    options?: { path?: string; serveClient?: boolean; perMessageDeflate?: boolean; httpCompression?: boolean },
  ): Server;
}
