import { AsyncLocalStorage } from "node:async_hooks";
import { EventEmitter } from "node:events";
import { Agent as HttpAgent, request, type ClientRequest, type RequestOptions } from "node:http";
import { Agent as HttpsAgent, request as requestTls } from "node:https";
import NodeModule, { createRequire } from "node:module";
import path from "node:path";
import type { LookupFunction } from "node:net";
import WebSocket from "ws";

/** The part of sockjs-client's WebSocket-like object the driver uses (its typings lean on the DOM). */
export interface Sock {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number): void;
  onopen: (() => void) | null;
  onmessage: ((e: { data: unknown }) => void) | null;
  onclose: ((e: { code: number; reason: string }) => void) | null;
}

export interface SockjsConstructor {
  new (url: string, reserved: undefined, options: { transports?: string[]; timeout?: number; transportOptions?: Record<string, unknown> }): Sock;
  readonly OPEN: number;
}

/** The SockJS connection an HTTP request of sockjs-client belongs to, and how it resolves names. */
export interface SockjsRequestContext {
  /** Hosted mode's public-only lookup; absent: the system resolver. */
  lookup?: LookupFunction;
  /** target.headers, on every request and the websocket's upgrade (a session cookie the endpoint's log-in set). */
  headers?: Record<string, string>;
  /**
   * The connection's own keep-alive sockets (its polls and sends reuse them, as one browser would):
   * never the process-wide agent's, which would hand one simulated client's socket to another
   * (one resolved by another lookup, too). Made on first use; closeRequestContext ends them.
   */
  agents?: { http?: HttpAgent; https?: HttpsAgent };
}

/** Ends a connection's sockets (sockjs-driver.ts, when the connection closes or fails to open). */
export function closeRequestContext(context: SockjsRequestContext): void {
  context.agents?.http?.destroy();
  context.agents?.https?.destroy();
  context.agents = undefined;
}

/**
 * sockjs-client makes every HTTP request of its own (the /info probe, the xhr-streaming and
 * xhr-polling receivers, every send) through one module, `lib/transport/driver/xhr.js`, and opens
 * its websocket through `lib/transport/driver/websocket.js` (faye-websocket, whose plain-ws socket
 * takes no lookup); neither takes per-connection socket options. This copy of sockjs-client gets
 * equivalent drivers that read the connection's lookup from this store, so in hosted mode each of
 * those sockets connects to the address the public-only lookup checked. The driver calls run inside it (sockjs-driver.ts:
 * constructor and send); everything else sockjs-client does follows from those calls' callbacks.
 */
export const sockjsRequests = new AsyncLocalStorage<SockjsRequestContext>();

interface XhrDriverThis extends EventEmitter {
  req: ClientRequest | null;
}

/**
 * sockjs-client's Node XHR driver (same events: `chunk` with the text so far, `finish` with status
 * and text, status 0 on a network error), resolving through the connection's lookup. A request
 * made outside any connection's context fails rather than resolving unchecked. A function, not a
 * class: sockjs-client's senders subclass it with `XhrDriver.call(this, …)`.
 */
function XhrDriver(this: XhrDriverThis, method: string, url: string, payload: string | null, opts?: { headers?: Record<string, string> }): void {
  EventEmitter.call(this);
  const context = sockjsRequests.getStore();
  if (!context) {
    this.req = null;
    process.nextTick(() => this.emit("finish", 0, "sockjs-client request outside a Volley connection (no lookup to check it with)"));
    return;
  }
  const target = new URL(url);
  const secure = target.protocol === "https:";
  const agents = (context.agents ??= {});
  const options: RequestOptions = {
    agent: secure ? (agents.https ??= new HttpsAgent({ keepAlive: true })) : (agents.http ??= new HttpAgent({ keepAlive: true })),
    method,
    hostname: target.hostname.replace(/^\[|\]$/g, ""),
    port: target.port,
    path: target.pathname + target.search,
    headers: { ...context.headers, ...opts?.headers },
    ...(context.lookup ? { lookup: context.lookup } : {}),
  };
  this.req = (secure ? requestTls : request)(options, (res) => {
    res.setEncoding("utf8");
    let text = "";
    res.on("data", (chunk: string) => {
      text += chunk;
      this.emit("chunk", 200, text);
    });
    res.once("end", () => {
      this.emit("finish", res.statusCode, text);
      this.req = null;
    });
  });
  this.req.on("error", (err) => this.emit("finish", 0, err.message));
  if (payload) this.req.write(payload);
  this.req.end();
}
Object.setPrototypeOf(XhrDriver.prototype, EventEmitter.prototype);
XhrDriver.prototype.close = function (this: XhrDriverThis) {
  this.removeAllListeners();
  if (this.req) {
    this.req.destroy();
    this.req = null;
  }
};
Object.assign(XhrDriver, { enabled: true, supportsCORS: true });

/**
 * sockjs-client's websocket driver: a `ws` client (the WebSocket-like API the transport uses:
 * onmessage with text data, onclose, onerror, send, close) resolving through the connection's
 * lookup and never following redirects. Outside a connection's context it reports an error at once.
 */
function WebsocketDriver(url: string, protocols: string[], options?: { headers?: Record<string, string> }): object {
  const context = sockjsRequests.getStore();
  if (!context) {
    const refused = { onmessage: null, onclose: null, onerror: null as ((e: unknown) => void) | null, send() {}, close() {} };
    setImmediate(() => refused.onerror?.(new Error("sockjs-client websocket outside a Volley connection (no lookup to check it with)")));
    return refused;
  }
  return new WebSocket(url, protocols, {
    headers: { ...context.headers, ...options?.headers },
    followRedirects: false,
    ...(context.lookup ? { lookup: context.lookup } : {}),
  });
}

/**
 * Loads a copy of sockjs-client of its own with the driver above in place of its XHR driver:
 * its modules are taken out of Node's module cache first (another copy loaded earlier keeps
 * working), the driver is put in, then the entry is loaded, which binds every sender and receiver
 * to it. Checked, so a sockjs-client whose layout changed fails here rather than resolving unchecked.
 */
function loadSockjsClient(): SockjsConstructor {
  const require = createRequire(import.meta.url);
  const entry = require.resolve("sockjs-client");
  const libDir = path.dirname(entry);
  const driverPath = path.join(libDir, "transport", "driver", "xhr.js");
  for (const key of Object.keys(require.cache)) if (key.startsWith(libDir + path.sep)) delete require.cache[key];
  const wsDriverPath = path.join(libDir, "transport", "driver", "websocket.js");
  for (const [file, exports] of [
    [driverPath, XhrDriver],
    [wsDriverPath, WebsocketDriver],
  ] as const) {
    const m = new NodeModule(file);
    Object.assign(m, { filename: file, loaded: true, exports });
    require.cache[file] = m;
  }
  const SockJS = require(entry) as SockjsConstructor;
  const xhrCors = require(path.join(libDir, "transport", "sender", "xhr-cors.js")) as { prototype: object };
  if (require(driverPath) !== XhrDriver || require(wsDriverPath) !== WebsocketDriver || !(xhrCors.prototype instanceof XhrDriver)) {
    throw new Error(
      `sockjs-client at ${libDir} no longer connects through lib/transport/driver/{xhr,websocket}.js: the hosted-mode lookup cannot reach its sockets`,
    );
  }
  return SockJS;
}

export const SockJSClient = loadSockjsClient();
