import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

/** Where every test app listens; port 0 (the default) picks a free one. */
export interface TestAppOptions {
  port?: number;
  host?: string;
}

/**
 * A running test app. `url` is what the protocol's client connects to (as on the echo targets);
 * `httpUrl` is the same server's plain HTTP base, where `GET /stats` and the app's own routes live.
 */
export interface TestApp<S> {
  port: number;
  url: string;
  httpUrl: string;
  /** The app's own counters, a fresh copy each call (also served as JSON at `GET /stats`). */
  stats(): S;
  close(): Promise<void>;
}

export const STATS_PATH = "/stats";

/** A client mistake answered with this status and `{ error }`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), "cache-control": "no-store" }).end(text);
}

/** Answers an HttpError with its status, anything else with 500, unless the response has started. */
export function sendError(res: ServerResponse, err: unknown): void {
  if (res.headersSent) return void res.destroy();
  if (err instanceof HttpError) return sendJson(res, err.status, { error: err.message });
  sendJson(res, 500, { error: err instanceof Error ? err.message : String(err) });
}

/** Reads a JSON body (an empty one is `{}`); a body that is not JSON or too big is a 400 / 413. */
export async function readJson(req: IncomingMessage, maxBytes = 1 << 20): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new HttpError(413, `body over ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString("utf8").trim();
  if (text === "") return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new HttpError(400, "body is not JSON: send a JSON object with content-type application/json");
  }
}

/** The JSON object a route expects; anything else is a 400 naming the route. */
export function asObject(body: unknown, route: string): Record<string, unknown> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new HttpError(400, `${route} takes a JSON object`);
  return body as Record<string, unknown>;
}

/** An optional string field: absent → undefined, a non-string → 400 naming the field. */
export function optionalString(body: Record<string, unknown>, field: string): string | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw new HttpError(400, `${field} must be a string`);
  return v;
}

export function requiredString(body: Record<string, unknown>, field: string): string {
  const v = optionalString(body, field);
  if (v === undefined || v === "") throw new HttpError(400, `${field} is required (a non-empty string)`);
  return v;
}

/** Answers `GET /stats` with the counters; returns false for any other request. */
export function serveStats(req: IncomingMessage, res: ServerResponse, stats: () => unknown): boolean {
  if (req.method !== "GET" || new URL(req.url ?? "/", "http://x").pathname !== STATS_PATH) return false;
  sendJson(res, 200, stats());
  return true;
}

/** Server-made ids as real apps make them: a prefix, a sequence and a random tail, never guessable from the client's data. */
export function idMaker(prefix: string): () => string {
  let seq = 0;
  return () => `${prefix}_${(++seq).toString(36)}${randomBytes(4).toString("hex")}`;
}
