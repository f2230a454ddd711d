import type { PlanInput } from "@volley/contracts";

/** What the caller may set instead of the defaults an import picks (the recording has no rates). */
export interface ImportOptions {
  /** The plan's name; absent: "Imported from <source>". */
  name?: string;
  /**
   * Point the plan at another server: its origin (scheme, host, port) replaces the recorded one,
   * the recorded path is kept unless this URL has its own.
   */
  targetUrl?: string;
  /**
   * Recorded origins of requests on another origin than the socket (a login service) → the origin
   * to send them to instead, like `{ "https://auth.example.com": "http://127.0.0.1:8081" }`.
   */
  origins?: Record<string, string>;
  connections?: number;
  /** Messages per second per connection. */
  rate?: number;
  /** How long each connection sends, like 30s. */
  duration?: string;
}

export const DEFAULT_SCHEDULE = { connections: 10, rate: 1, duration: "30s" } as const;

/** The schedule part of an imported plan. */
export function schedule(options: ImportOptions): Pick<PlanInput, "connections" | "scenario"> {
  const count = options.connections ?? DEFAULT_SCHEDULE.connections;
  return {
    connections: { count, rate: Math.max(1, Math.min(count, 100)) },
    scenario: {
      kind: "echo",
      duration: options.duration ?? DEFAULT_SCHEDULE.duration,
      message: { rate: options.rate ?? DEFAULT_SCHEDULE.rate, timeout: "10s" },
    },
  };
}

export const SCHEDULE_NOTE = `the schedule is a small default (connections.count, scenario.message.rate per connection, scenario.duration): set the load you want to test`;

/** `recorded` with the override's origin (and its path when it has one). */
export function retarget(recorded: string, override: string | undefined): string {
  if (override === undefined) return recorded;
  const from = new URL(recorded);
  const to = new URL(override);
  const scheme = (p: string) => (/^wss?:$/.test(from.protocol) ? p.replace(/^http/, "ws") : p.replace(/^ws/, "http"));
  const path = to.pathname !== "/" || to.search !== "" ? `${to.pathname}${to.search}` : `${from.pathname}${from.search}`;
  return `${scheme(to.protocol)}//${to.host}${path}`;
}
