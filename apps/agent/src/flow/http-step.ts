import { compileJsonPath, compileText, compileValue, type CaptureSource, type HttpRequest, type TemplateContext } from "@volley/contracts";
import type { LookupFunction } from "node:net";
import type { Agent, request } from "undici";
import { redirectDetail } from "../drivers/http-errors";

/** Cookies a connection was given, by name (sent back on its later requests and its connect). */
export type CookieJar = Map<string, string>;

export function cookieHeader(jar: CookieJar): string | undefined {
  if (jar.size === 0) return undefined;
  return [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
}

function takeCookies(jar: CookieJar, setCookie: string | string[] | undefined): void {
  for (const line of Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : []) {
    const pair = line.split(";", 1)[0]!;
    const eq = pair.indexOf("=");
    if (eq > 0) jar.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
  }
}

/** A request the server answered with a status the step does not accept (a protocol error, not a transport one). */
export class HttpStatusError extends Error {}

/** HTTP(S) base for relative request URLs: target.url with ws:// read as http://. */
export function httpBase(targetUrl: string): string {
  const u = new URL(targetUrl);
  if (u.protocol === "ws:") u.protocol = "http:";
  if (u.protocol === "wss:") u.protocol = "https:";
  return u.toString();
}

/** A request step or publish request, compiled; `run` throws an Error whose message says what failed. */
export interface CompiledRequest {
  run(ctx: TemplateContext, jar: CookieJar): Promise<{ status: number; body: string; headers: Record<string, string | string[] | undefined> }>;
}

/**
 * One shared keep-alive dispatcher per shard (hosted mode: it resolves through the public-only
 * lookup), built at the shard's first HTTP request: undici (755 kB) is loaded then, so a flow or
 * users plan with no HTTP step never parses it, and an engine thread starts without it.
 */
export class FlowDispatcher {
  private client: Promise<{ agent: Agent; request: typeof request }> | undefined;

  constructor(
    private readonly lookup: LookupFunction | undefined,
    private readonly timeoutMs: number,
  ) {}

  /** The shard's agent and undici's `request`, loaded once (every request after the first awaits a settled promise). */
  get(): Promise<{ agent: Agent; request: typeof request }> {
    const { lookup, timeoutMs } = this;
    this.client ??= import("undici").then(({ Agent, request }) => ({
      agent: new Agent({ connect: { timeout: timeoutMs, ...(lookup ? { lookup } : {}) }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs }),
      request,
    }));
    return this.client;
  }

  async close(): Promise<void> {
    if (this.client) await (await this.client).agent.close();
  }
}

export function compileRequest(
  req: Omit<HttpRequest, "capture">,
  base: string,
  dispatcher: FlowDispatcher,
  baseHeaders: Record<string, string> | undefined,
): CompiledRequest {
  const url = compileText(req.url);
  const headers = Object.entries(req.headers ?? {}).map(([k, v]) => [k.toLowerCase(), compileText(v)] as const);
  const json = req.json !== undefined ? compileValue(req.json) : undefined;
  const body = req.body !== undefined ? compileText(req.body) : undefined;
  const expected = req.expect?.status;
  const ok = (status: number) =>
    expected === undefined
      ? status >= 200 && status < 300
      : expected === "any"
        ? true
        : Array.isArray(expected)
          ? expected.includes(status)
          : status === expected;
  return {
    async run(ctx, jar) {
      const h: Record<string, string> = { ...baseHeaders };
      for (const [k, v] of headers) h[k] = v(ctx);
      const cookie = cookieHeader(jar);
      if (cookie && h.cookie === undefined) h.cookie = cookie;
      let payload: string | undefined;
      if (json) {
        payload = JSON.stringify(json(ctx));
        h["content-type"] ??= "application/json";
      } else if (body) payload = body(ctx);
      const target = new URL(url(ctx), base);
      const { request, agent } = await dispatcher.get();
      const res = await request(target, { method: req.method, headers: h, body: payload, dispatcher: agent });
      const text = await res.body.text();
      takeCookies(jar, res.headers["set-cookie"]);
      const redirect = redirectDetail(res.statusCode, res.headers.location);
      if (redirect && !ok(res.statusCode)) throw new Error(`${req.method} ${target.pathname}: ${redirect}`);
      if (!ok(res.statusCode))
        throw new HttpStatusError(`${req.method} ${target.pathname} answered HTTP ${res.statusCode}${text ? `: ${text.slice(0, 200)}` : ""}`);
      return { status: res.statusCode, body: text, headers: res.headers };
    },
  };
}

/** Compiled captures: each reads its value from a response (or a message) into ctx.vars. */
export type CompiledCaptures = (
  into: Record<string, unknown>,
  from: { json?: unknown; body?: string; headers?: Record<string, string | string[] | undefined>; jar?: CookieJar },
) => string | undefined;

/** Returns the name of the first capture that found nothing (the step fails), or undefined. */
export function compileCaptures(capture: Record<string, CaptureSource> | undefined): CompiledCaptures {
  const readers = Object.entries(capture ?? {}).map(([name, source]) => {
    if (typeof source === "string" || "json" in source) {
      const path = compileJsonPath(typeof source === "string" ? source : source.json);
      const read = (f: Parameters<CompiledCaptures>[1]) => path(f.json !== undefined ? f.json : parseJson(f.body));
      if (typeof source === "string" || source.pick === undefined) return [name, read] as const;
      return [
        name,
        (f: Parameters<CompiledCaptures>[1]) => {
          const list = read(f);
          return Array.isArray(list) && list.length > 0 ? (list[Math.floor(Math.random() * list.length)] as unknown) : undefined;
        },
      ] as const;
    }
    if ("header" in source) {
      const key = source.header.toLowerCase();
      return [
        name,
        (f: Parameters<CompiledCaptures>[1]) => {
          const v = f.headers?.[key];
          return Array.isArray(v) ? v[0] : v;
        },
      ] as const;
    }
    return [name, (f: Parameters<CompiledCaptures>[1]) => f.jar?.get(source.cookie)] as const;
  });
  return (into, from) => {
    for (const [name, read] of readers) {
      const v = read(from);
      if (v === undefined) return name;
      into[name] = v;
    }
    return undefined;
  };
}

function parseJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
