import { randomUUID } from "node:crypto";
import { describeIssues, fieldIssues, type ApiError as ApiErrorBody, type FieldIssue } from "@volley/contracts";
import type { Logger } from "pino";
import type { z } from "zod";
import { MisconfiguredError } from "../env";
import { authenticate, authorize, type AuthContext, type Permission } from "./auth";
import { ApiError, classifyError } from "./errors";
import { getLogger, logOnce } from "./log";

/** What every handler receives: the validated body, the route params, who is asking, a request logger. */
export interface HandlerContext<Body> {
  req: Request;
  body: Body;
  params: Record<string, string>;
  auth: AuthContext;
  log: Logger;
  requestId: string;
}

/** Next's route handler signature (params is a Promise since Next 15). */
export type RouteHandler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;

interface Options<S extends z.ZodType | undefined> {
  /** Body schema; when given, the body must be JSON and is validated before the handler runs. */
  body?: S;
  /** What the caller must be allowed to do (checked by the auth hook). */
  permission: Permission;
  handler: (ctx: HandlerContext<S extends z.ZodType ? z.output<S> : undefined>) => Promise<Response>;
}

export function json(data: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return Response.json(data, { status, headers: { "cache-control": "no-store", ...headers } });
}

export function errorResponse(status: number, code: string, message: string, issues?: FieldIssue[], requestId?: string): Response {
  const body: ApiErrorBody = { error: { code, message, ...(issues ? { issues } : {}) } };
  return json(body, status, requestId ? { "x-request-id": requestId } : {});
}

/** 400 invalid_body naming every offending field, from zod issues (paths joined with dots). */
export function invalidBody(issues: FieldIssue[]): ApiError {
  return new ApiError(400, "invalid_body", describeIssues(issues), issues);
}

/** Reads a JSON body; empty or malformed JSON is a 400 `invalid_json` saying what was wrong. */
export async function readJson(req: Request): Promise<unknown> {
  const text = await req.text();
  if (text.trim() === "") throw new ApiError(400, "invalid_json", "the request body is empty — send a JSON document (Content-Type: application/json)");
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new ApiError(400, "invalid_json", `the request body is not valid JSON: ${why}`);
  }
}

/**
 * The one wrapper every /api route goes through (Dub-style): request id and logger, the auth hook
 * (default org for now), JSON parsing and zod validation of the body, and the one error shape
 * `{ error: { code, message, issues? } }`. Unknown errors are logged with their stack and answered
 * with a generic 500 `internal` that never leaks internals.
 */
export function apiHandler<S extends z.ZodType | undefined = undefined>(opts: Options<S>): RouteHandler {
  return async (req, routeCtx) => {
    const requestId = req.headers.get("x-request-id") ?? randomUUID();
    const log = getLogger().child({ requestId, method: req.method, path: new URL(req.url).pathname });
    try {
      const params = (await routeCtx?.params) ?? {};
      const auth = await authenticate(req);
      authorize(auth, opts.permission);
      let body: unknown = undefined;
      if (opts.body) {
        const parsed = opts.body.safeParse(await readJson(req));
        if (!parsed.success) throw invalidBody(fieldIssues(parsed.error));
        body = parsed.data;
      }
      const res = await opts.handler({ req, body: body as never, params, auth, log, requestId });
      res.headers.set("x-request-id", requestId);
      return res;
    } catch (err) {
      const known = classifyError(err);
      if (known instanceof MisconfiguredError) {
        logOnce(`misconfigured:${known.message}`, known.message);
        return errorResponse(500, known.code, known.message, undefined, requestId);
      }
      if (known) {
        if (known.status >= 500) log.warn(known.message);
        else log.debug({ code: known.code }, known.message);
        return errorResponse(known.status, known.code, known.message, known.issues, requestId);
      }
      log.error({ err }, "unhandled error in API handler");
      return errorResponse(500, "internal", `something went wrong on our side; it has been logged (request id ${requestId})`, undefined, requestId);
    }
  };
}
