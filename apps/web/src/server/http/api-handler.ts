import { randomUUID } from "node:crypto";
import {
  describeIssues,
  fieldIssues,
  requiredFieldError,
  type ApiError as ApiErrorBody,
  type ApiErrorCode,
  type ApiErrorStatus,
  type FieldIssue,
} from "@volley/contracts";
import type { Logger } from "pino";
import type { z } from "zod";
import { maxBodyBytes, MisconfiguredError } from "@/env";
import { readBodyText } from "./body-limit";
import { authenticate, authorize, type AuthContext, type Permission } from "../auth/auth";
import { ApiError, classifyError } from "./errors";
import { limitApi } from "./rate-limit";
import { getLogger, logOnce } from "./log";
import { findUnstorableText } from "./unstorable-text";

/** What every handler receives: the validated body, the route params, who is asking, a request logger. */
export interface HandlerContext<Body, Query = undefined> {
  req: Request;
  body: Body;
  /** The validated query string, when the route declares a `query` schema. */
  query: Query;
  params: Record<string, string>;
  auth: AuthContext;
  log: Logger;
  requestId: string;
}

/** Next's route handler signature (params is a Promise since Next 15). */
export type RouteHandler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;

type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

interface Options<S extends z.ZodType | undefined, Q extends z.ZodType | undefined> {
  /** Body schema; when given, the body must be JSON and is validated before the handler runs. */
  body?: S;
  /** Query-string schema (values arrive as strings: use z.coerce); unknown or bad parameters are a 400 `invalid_query`. */
  query?: Q;
  /** What the caller must be allowed to do (auth.ts: role for sessions, scope for API tokens). */
  permission: Permission;
  handler: (ctx: HandlerContext<Out<S>, Out<Q>>) => Promise<Response>;
}

export function json(data: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return Response.json(data, { status, headers: { "cache-control": "no-store", ...headers } });
}

export function errorResponse<C extends ApiErrorCode>(
  status: ApiErrorStatus<C>,
  code: C,
  message: string,
  issues?: FieldIssue[],
  requestId?: string,
  headers: Record<string, string> = {},
): Response {
  const body: ApiErrorBody = { error: { code, message, ...(issues ? { issues } : {}) } };
  return json(body, status, { ...headers, ...(requestId ? { "x-request-id": requestId } : {}) });
}

/** 400 invalid_body naming every offending field, from zod issues (paths joined with dots). */
export function invalidBody(issues: FieldIssue[]): ApiError {
  return new ApiError(400, "invalid_body", describeIssues(issues), issues);
}

/**
 * Reads a JSON body of at most VOLLEY_MAX_BODY_BYTES (413 `payload_too_large` past it); empty or malformed JSON is a 400 `invalid_json` saying what was wrong, and
 * text PostgreSQL cannot store (NUL, unpaired surrogates) a 400 `invalid_body` naming the field.
 */
export async function readJson(req: Request): Promise<unknown> {
  const text = await readBodyText(req, maxBodyBytes(), "API requests (VOLLEY_MAX_BODY_BYTES)");
  if (text.trim() === "") throw new ApiError(400, "invalid_json", "the request body is empty — send a JSON document (Content-Type: application/json)");
  let body: unknown;
  try {
    body = JSON.parse(text) as unknown;
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new ApiError(400, "invalid_json", `the request body is not valid JSON: ${why}`);
  }
  const unstorable = findUnstorableText(body);
  if (unstorable) throw invalidBody([unstorable]);
  return body;
}

/**
 * The one wrapper every /api route goes through (Dub-style): request id and logger, authentication
 * (API token or session, auth.ts) and permission (role or token scope), rate limiting, JSON parsing and zod validation of the body, and the one error shape
 * `{ error: { code, message, issues? } }`. Unknown errors are logged with their stack and answered
 * with a generic 500 `internal` that never leaks internals.
 */
export function apiHandler<S extends z.ZodType | undefined = undefined, Q extends z.ZodType | undefined = undefined>(opts: Options<S, Q>): RouteHandler {
  return async (req, routeCtx) => {
    const requestId = req.headers.get("x-request-id") ?? randomUUID();
    const log = getLogger().child({ requestId, method: req.method, path: new URL(req.url).pathname });
    try {
      const params = (await routeCtx?.params) ?? {};
      const auth = await authenticate(req, opts.permission);
      // The OpenAPI document is static and cacheable; everything else counts against the caller's limit.
      if (opts.permission !== "docs:read" && opts.permission !== "public") await limitApi(auth, req);
      authorize(auth, opts.permission);
      for (const [name, value] of Object.entries(params)) {
        // No stored id holds such text, and PostgreSQL would fail the lookup with a 500 rather than find nothing.
        if (findUnstorableText(value))
          throw new ApiError(404, "not_found", `${name} ${JSON.stringify(value)} does not exist (ids never hold NUL characters or unpaired surrogates)`);
      }
      let query: unknown;
      if (opts.query) {
        const parsed = opts.query.safeParse(Object.fromEntries(new URL(req.url).searchParams));
        if (!parsed.success) {
          const issues = fieldIssues(parsed.error);
          throw new ApiError(400, "invalid_query", describeIssues(issues), issues);
        }
        query = parsed.data;
      }
      let body: unknown;
      if (opts.body) {
        // A field left out reads "required: …" with what belongs there (and, in a plan, an example).
        const parsed = opts.body.safeParse(await readJson(req), { error: requiredFieldError });
        if (!parsed.success) throw invalidBody(fieldIssues(parsed.error));
        body = parsed.data;
      }
      const res = await opts.handler({ req, body: body as never, query: query as never, params, auth, log, requestId });
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
        return errorResponse(known.status, known.code, known.message, known.issues, requestId, known.headers);
      }
      log.error({ err }, "unhandled error in API handler");
      return errorResponse(500, "internal", `something went wrong on our side; it has been logged (request id ${requestId})`, undefined, requestId);
    }
  };
}
