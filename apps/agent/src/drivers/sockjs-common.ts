import { request } from "node:http";
import { request as requestTls } from "node:https";
import { ConnectError, type ErrorClass } from "./connect-error";
import type { ConnectOptions } from "./driver";
import { classifyWsError } from "./ws-driver";

/** sockjs-client's own URL rule: the query goes after the path it appends. */
export function sockjsInfoUrl(url: string): string {
  const [base, query] = url.split("?", 2);
  return `${base!.replace(/\/$/, "")}/info${query ? `?${query}` : ""}`;
}

/**
 * Why a SockJS endpoint could not be opened; `notSockjs` when something answered, but not
 * SockJS's /info; `refused` when it answered 401 or 403 (it wants credentials).
 */
export interface SockjsInfoProblem {
  errorClass: ErrorClass;
  detail: string;
  notSockjs?: boolean;
  refused?: boolean;
}

/** SockJS's /info answer: JSON with a `websocket` flag (sockjs-node, Spring, sockjs-tornado alike). */
function isSockjsInfo(text: string): boolean {
  try {
    const info = JSON.parse(text) as { websocket?: unknown };
    return typeof info?.websocket === "boolean";
  } catch {
    return false;
  }
}

/**
 * sockjs-client reports every failed open as "Cannot connect to server" or "All transports
 * failed", without the socket error or HTTP status. To count failures by class, a failed attempt
 * asks the server's /info itself (resolving through `lookup` in hosted mode); successful opens are
 * never slowed by this. Undefined: /info answers as SockJS does, the failure lies elsewhere.
 */
export function probeSockjsInfo(
  url: string,
  timeoutMs: number,
  lookup: ConnectOptions["lookup"],
  headers?: Record<string, string>,
): Promise<SockjsInfoProblem | undefined> {
  return new Promise((resolve) => {
    const target = sockjsInfoUrl(url);
    const req = (target.startsWith("https:") ? requestTls : request)(
      target,
      { method: "GET", timeout: timeoutMs, agent: false, headers, ...(lookup ? { lookup } : {}) },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          if (text.length < 4096) text += chunk;
        });
        res.on("error", () => resolve({ errorClass: "closed", detail: "the /info answer broke off" }));
        res.on("end", () => {
          if (res.statusCode === 401 || res.statusCode === 403) resolve({ errorClass: "handshake", detail: `HTTP ${res.statusCode}`, refused: true });
          else if (res.statusCode !== 200) resolve({ errorClass: "handshake", detail: `HTTP ${res.statusCode ?? "?"}`, notSockjs: true });
          else if (!isSockjsInfo(text)) resolve({ errorClass: "handshake", detail: "HTTP 200 without SockJS's JSON", notSockjs: true });
          else resolve(undefined);
        });
      },
    );
    req.on("timeout", () => {
      req.destroy();
      resolve({ errorClass: "timeout", detail: `no answer in ${timeoutMs} ms` });
    });
    req.on("error", (err: NodeJS.ErrnoException) => resolve(classifyWsError(err)));
    req.end();
  });
}

/**
 * The transports a connection may use. Hosted mode (a lookup): sockjs-client's eventsource
 * transport opens its stream with no way to pass one, so it is left out; a ConnectError naming
 * `field` when nothing is left.
 */
export function usableTransports(transports: readonly string[], lookup: ConnectOptions["lookup"], field: string): string[] {
  const usable = lookup ? transports.filter((t) => t !== "eventsource") : [...transports];
  if (usable.length === 0)
    throw new ConnectError(
      "other",
      `SockJS transport eventsource cannot be held to hosted Volley's public-address check: allow websocket, xhr-streaming or xhr-polling in ${field}`,
    );
  return usable;
}
