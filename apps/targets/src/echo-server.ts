/** What every echo target (ws, Socket.IO, SockJS) offers its tests and main.ts. */
export interface EchoServerOptions {
  /** 0 picks a free port (tests). */
  port?: number;
  host?: string;
  /** Default reply delay for every message; a connection may override it with `?delay=<ms>`. */
  delayMs?: number;
}

export interface EchoServer {
  port: number;
  /** The URL a client of this protocol connects to. */
  url: string;
  /**
   * Holds every reply (new and already delayed ones) until `ms` from now, then releases them in
   * order. Lets tests show that a stalling server shows up in tail latency (coordinated omission).
   */
  stall(ms: number): void;
  /** Number of open client connections. */
  connections(): number;
  /** Terminates clients, drops pending replies and closes the listener. */
  close(): Promise<void>;
}
