import type { HoldMode } from "./echo-hold";
import type { HoldSummary } from "./hold-stats";

/** What every echo target (ws, Socket.IO, SockJS) offers its tests and main.ts. */
export interface EchoServerOptions {
  /** 0 picks a free port (tests). */
  port?: number;
  host?: string;
  /** Default reply delay for every message; a connection may override it with `?delay=<ms>`. */
  delayMs?: number;
  /** How holds wait out their deadline (echo-hold's HOLD_MODES); `timer` unless a test needs the hold to the µs. */
  hold?: HoldMode;
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
  /** The holds this server actually applied since it started or since resetHoldStats(). */
  holdStats(): HoldSummary;
  resetHoldStats(): void;
  /** Number of open client connections. */
  connections(): number;
  /** Terminates clients, drops pending replies and closes the listener. */
  close(): Promise<void>;
}
