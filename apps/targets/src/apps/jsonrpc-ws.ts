import type { RawData, ServerOptions } from "ws";
import type { TestApp, TestAppOptions } from "./app-http";
import { startWsApp } from "./ws-app";

export const JSONRPC_PATH = "/rpc";

export interface JsonRpcStats {
  /** Well-formed calls with an `id` (each element of a batch counts). */
  requests: number;
  /** Well-formed calls without an `id` (never answered, even when they fail). */
  notifications: number;
  /** Response objects sent (each element of a batch response counts). */
  responses: number;
  /** Of those responses, the ones carrying an `error`. */
  errors: number;
  /** Upgrades answered HTTP 503 because `maxConnections` were open. */
  refused: number;
  /** Connections closed 1008 for calling faster than `maxCallsPerSecond`. */
  rateLimited: number;
}

/** The limits a production JSON-RPC gateway puts on its clients; absent, none. */
export interface JsonRpcWsOptions extends TestAppOptions {
  /** Upgrades beyond this many open connections are answered HTTP 503 with a JSON `{ error }`. */
  maxConnections?: number;
  /** A connection sending more frames than this within one wall-clock second is closed 1008 (policy violation), unanswered. */
  maxCallsPerSecond?: number;
}

type Id = string | number | null;
interface Response {
  jsonrpc: "2.0";
  id: Id;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

export const JSONRPC_ERRORS = { parse: -32700, invalidRequest: -32600, methodNotFound: -32601, invalidParams: -32602 } as const;

class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

const methods: Record<string, (params: unknown) => unknown> = {
  echo: (params) => params ?? null,
  add: (params) => {
    const [a, b] = Array.isArray(params) ? (params as unknown[]) : [];
    if (typeof a !== "number" || typeof b !== "number") throw new RpcError(JSONRPC_ERRORS.invalidParams, "Invalid params: add takes [a, b], two numbers");
    return a + b;
  },
  time: () => Date.now(),
};

/**
 * A JSON-RPC 2.0 server over raw WebSocket text frames at `/rpc`, as a trading or IoT backend
 * speaks it: `echo(params)` → params, `add([a, b])` → a + b, `time()` → the server's epoch ms.
 * Errors per the spec: -32700 parse error (id null), -32600 invalid request, -32601 method not
 * found, -32602 invalid params. A call without `id` is a notification and gets no response; an
 * array is a batch answered by an array of the responses (none at all when every element was a
 * notification; an empty array is one -32600). Limits as a gateway has them (JsonRpcWsOptions): too
 * many connections are refused HTTP 503, a client calling too fast is closed 1008.
 */
export function startJsonRpcWs(options: JsonRpcWsOptions = {}): Promise<TestApp<JsonRpcStats>> {
  const { maxConnections = Infinity, maxCallsPerSecond = Infinity } = options;
  const counters: JsonRpcStats = { requests: 0, notifications: 0, responses: 0, errors: 0, refused: 0, rateLimited: 0 };
  /** Accepted upgrades not yet closed (clients.size lags behind upgrades still completing). */
  let open = 0;
  const stats = () => ({ ...counters });

  const verifyClient: ServerOptions["verifyClient"] = (_info, done) => {
    if (open < maxConnections) {
      open++;
      return done(true);
    }
    counters.refused++;
    done(false, 503, JSON.stringify({ error: `too many connections: this server takes ${maxConnections}` }), { "content-type": "application/json" });
  };

  const fail = (id: Id, code: number, message: string): Response => ({ jsonrpc: "2.0", id, error: { code, message } });

  /** One call; undefined when nothing is to be sent (a notification). */
  const call = (msg: unknown): Response | undefined => {
    if (typeof msg !== "object" || msg === null || Array.isArray(msg)) return fail(null, JSONRPC_ERRORS.invalidRequest, "Invalid Request: expected an object");
    const m = msg as Record<string, unknown>;
    const hasId = "id" in m;
    const id = m.id;
    const idOk = id === null || typeof id === "string" || typeof id === "number";
    const paramsOk = m.params === undefined || (typeof m.params === "object" && m.params !== null);
    if (m.jsonrpc !== "2.0" || typeof m.method !== "string" || (hasId && !idOk) || !paramsOk) {
      return fail(
        hasId && idOk ? (id as Id) : null,
        JSONRPC_ERRORS.invalidRequest,
        'Invalid Request: needs jsonrpc "2.0", a string method, params an array or object, id a string, number or null',
      );
    }
    if (hasId) counters.requests++;
    else counters.notifications++;
    let response: Response;
    try {
      const method = Object.hasOwn(methods, m.method) ? methods[m.method] : undefined;
      if (!method) throw new RpcError(JSONRPC_ERRORS.methodNotFound, `Method not found: ${m.method} (this server has ${Object.keys(methods).join(", ")})`);
      response = { jsonrpc: "2.0", id: id as Id, result: method(m.params) };
    } catch (err) {
      const e = err instanceof RpcError ? err : new RpcError(-32603, `Internal error: ${(err as Error).message}`);
      response = fail(id as Id, e.code, e.message);
    }
    return hasId ? response : undefined;
  };

  const handle = (text: string): Response | Response[] | undefined => {
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      return fail(null, JSONRPC_ERRORS.parse, "Parse error: the frame is not JSON");
    }
    if (!Array.isArray(msg)) return call(msg);
    if (msg.length === 0) return fail(null, JSONRPC_ERRORS.invalidRequest, "Invalid Request: an empty batch");
    const out = msg.map(call).filter((r): r is Response => r !== undefined);
    return out.length > 0 ? out : undefined;
  };

  return startWsApp(options, { path: JSONRPC_PATH, stats, verifyClient }, (ws) => {
    ws.on("close", () => open--);
    let second = 0;
    let calls = 0;
    ws.on("message", (data: RawData) => {
      const now = Math.floor(Date.now() / 1000);
      if (now !== second) [second, calls] = [now, 0];
      if (++calls > maxCallsPerSecond) {
        if (calls === maxCallsPerSecond + 1) {
          counters.rateLimited++;
          ws.close(1008, `rate limit: more than ${maxCallsPerSecond} calls in a second`);
        }
        return;
      }
      const reply = handle(String(data));
      if (reply === undefined) return;
      for (const r of Array.isArray(reply) ? reply : [reply]) {
        counters.responses++;
        if (r.error) counters.errors++;
      }
      ws.send(JSON.stringify(reply));
    });
  });
}
