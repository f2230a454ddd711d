/// <reference path="./socket.io-client-v2.d.ts" />
import type { Agent } from "node:http";
import type { SocketioOptions } from "@volley/contracts";
import { io } from "socket.io-client";
import ioV2 from "socket.io-client-v2";
import msgpackParser from "socket.io-msgpack-parser";
import type { ErrorClass } from "./connect-error";
import { classifyWsError } from "./ws-driver";

/** The client socket as the driver uses it: socket.io-client 4 (v3 and v4 servers) and 2 both fit. */
export interface IoSocket {
  readonly connected: boolean;
  // biome-ignore lint/suspicious/noExplicitAny: a listener takes its event's own argument types, which any[] admits and unknown[] does not.
  on(event: string, listener: (...args: any[]) => void): unknown;
  // biome-ignore lint/suspicious/noExplicitAny: a listener takes its event's own argument types, which any[] admits and unknown[] does not.
  once(event: string, listener: (...args: any[]) => void): unknown;
  emit(event: string, ...args: unknown[]): unknown;
  removeAllListeners(): unknown;
  /** socket.io-client 3+ only: every incoming event. */
  onAny?(listener: (event: string, ...args: unknown[]) => void): unknown;
  disconnect(): unknown;
  /** The Manager (its Engine.IO connection): "open" once the Engine.IO handshake is done. */
  readonly io?: { once(event: "open", listener: () => void): unknown };
}

export interface IoOpenOptions {
  url: string;
  socketio: SocketioOptions;
  connectTimeoutMs: number;
  agent: Agent;
  headers?: Record<string, string>;
  /** The handshake's auth payload (Socket.IO 3 and 4). */
  auth?: unknown;
}

interface ErrnoLike {
  code?: string;
  message: string;
}

type TransportErrorLike = Error & { type?: string; description?: unknown; context?: unknown };

/** Maps a socket.io-client connect_error to an error class, keeping the HTTP status when one is known. */
export function classifySocketioError(err: TransportErrorLike): { errorClass: ErrorClass; detail: string } {
  if (err.message === "timeout") return { errorClass: "timeout", detail: "no connect in time" };
  if (err.type === "TransportError") {
    const d = err.description;
    // Polling: the HTTP status, or 0 with the socket error kept on the XMLHttpRequest.
    if (typeof d === "number" && d > 0) return { errorClass: "handshake", detail: `HTTP ${d}` };
    // Websocket: v4 keeps the ws error as description.error, v2 hands over the ws ErrorEvent (also .error).
    const cause = (d as { error?: ErrnoLike } | undefined)?.error ?? (err.context as { statusText?: unknown } | undefined)?.statusText;
    if (cause instanceof Error) {
      const status = /Unexpected server response: (\d+)/.exec(cause.message);
      if (status) return { errorClass: "handshake", detail: `HTTP ${status[1]}` };
      return classifyWsError(cause);
    }
    return { errorClass: "other", detail: err.message };
  }
  if (/parse|parser|invalid payload/i.test(err.message)) return { errorClass: "protocol", detail: err.message };
  // Anything else came from the server's side of the Socket.IO handshake: a middleware refusal
  // ("invalid delay"), an unknown namespace ("Invalid namespace").
  return { errorClass: "handshake", detail: err.message };
}

/** The URL socket.io-client connects to: target.url with the plan's namespace, if any, as its path. */
function socketUrl(url: string, namespace: string | undefined): string {
  if (namespace === undefined) return url;
  const u = new URL(url);
  u.pathname = namespace;
  return u.toString();
}

/**
 * Opens a socket with the client for the server's major version; `failed` hears, classified, every
 * way the attempt can end before "connect". The options are the same for both clients: one
 * Engine.IO connection per load connection (no multiplexing), no silent reconnect.
 */
export function openIoSocket(o: IoOpenOptions, failed: (errorClass: ErrorClass, detail: string) => void): IoSocket {
  const url = socketUrl(o.url, o.socketio.namespace);
  const common = {
    path: o.socketio.path,
    transports: o.socketio.transports,
    forceNew: true,
    multiplex: false,
    reconnection: false,
    timeout: o.connectTimeoutMs,
    extraHeaders: o.headers,
  };
  const onConnectError = (err: TransportErrorLike) => {
    const { errorClass, detail } = classifySocketioError(err);
    failed(errorClass, detail);
  };
  if (o.socketio.version !== 2) {
    const auth = o.auth as Record<string, unknown> | undefined;
    const socket = io(url, {
      ...common,
      agent: o.agent as unknown as string,
      ...(auth !== undefined ? { auth } : {}),
      // Both ends must share it: socket.io-msgpack-parser speaks Socket.IO 3 and 4 only (checked in the plan).
      ...(o.socketio.parser === "msgpack" ? { parser: msgpackParser } : {}),
    });
    socket.on("connect_error", onConnectError);
    return socket;
  }
  const socket = ioV2(url, { ...common, agent: o.agent });
  socket.on("connect_error", onConnectError);
  socket.on("connect_timeout", () => failed("timeout", "no connect in time"));
  // v2 reports a namespace refused by middleware as an "error" packet carrying the message, where
  // v4 raises connect_error; before "connect" that is the handshake failing.
  socket.on("error", (data: unknown) => {
    if (data instanceof Error) return onConnectError(data);
    const message = typeof data === "string" ? data : ((data as { message?: unknown } | null)?.message ?? JSON.stringify(data));
    failed("handshake", String(message));
  });
  return socket;
}
