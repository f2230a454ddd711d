import { AdmissionRefusal } from "@volley/admission";
import type { ApiErrorCode, ApiErrorStatus, FieldIssue } from "@volley/contracts";
import { errorCauses } from "@volley/db";
import { databaseUrl, MisconfiguredError, redisUrl } from "@/env";

/**
 * An error with one of the API's error codes (API_ERROR_CODES in contracts) and that code's HTTP
 * status (the type refuses any other); its message is safe to show.
 */
export class ApiError<C extends ApiErrorCode = ApiErrorCode> extends Error {
  constructor(
    readonly status: ApiErrorStatus<C>,
    readonly code: C,
    message: string,
    readonly issues?: FieldIssue[],
    /** Extra response headers (Retry-After on 429). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export const notFound = (what: string) => new ApiError(404, "not_found", `${what} does not exist`);

/** A list's `cursor` that names none of its items (a 400: the caller sent something other than a `next`). */
export const unknownCursor = (what: string, cursor: string) =>
  new ApiError(
    400,
    "invalid_query",
    `cursor: ${JSON.stringify(cursor)} names no ${what} of this list — pass the \`next\` of the previous page, or leave cursor out to start from the newest`,
    [{ path: "cursor", message: `names no ${what} of this list` }],
  );

const NETWORK_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "ECONNRESET", "EHOSTUNREACH", "ENETUNREACH", "57P03"]);

/**
 * Turns infrastructure failures into errors a person can act on: PostgreSQL unreachable, tables
 * missing, Redis unreachable, a missing variable. Returns null for everything else (a bug: 500).
 */
export function classifyError(err: unknown): ApiError | MisconfiguredError | null {
  for (const e of errorCauses(err)) {
    if (e instanceof ApiError || e instanceof MisconfiguredError) return e;
    // The admission rules are shared with the hub (@volley/admission); their refusals carry their API code.
    if (e instanceof AdmissionRefusal) return new ApiError(e.status, e.code, e.message, e.issues);
  }
  for (const e of errorCauses(err)) {
    if (typeof e !== "object" || e === null) continue;
    const code = (e as { code?: unknown }).code;
    const message = e instanceof Error ? e.message : "";
    if (code === "42P01") {
      return new MisconfiguredError(
        "DATABASE_URL",
        "the database at DATABASE_URL has no Volley tables — apply the Volley migrations to it (migrateDatabase from @volley/db) or point DATABASE_URL at the Volley database",
      );
    }
    if (code === "3D000" || code === "28P01" || code === "28000") {
      return new MisconfiguredError("DATABASE_URL", `PostgreSQL refused DATABASE_URL: ${message} — check the database name and credentials`);
    }
    if (typeof code === "string" && NETWORK_CODES.has(code)) {
      const service = serviceAt((e as { port?: unknown }).port);
      const what = !service
        ? "a backing service is unreachable"
        : service.name === "PostgreSQL"
          ? "the database (PostgreSQL at DATABASE_URL) is unreachable"
          : `${service.name} at ${service.variable} is unreachable`;
      return new ApiError(
        503,
        "unavailable",
        `${what} (${message || code}) — check that ${service ? `it is running and ${service.variable} is right` : "PostgreSQL and Redis are running"}`,
      );
    }
    if (e instanceof RedisUnavailableError) return new ApiError(503, "unavailable", e.message);
    // ioredis commandTimeout (services.ts): Redis is connected but frozen.
    if (isRedisCommandTimeout(e)) return new ApiError(503, "unavailable", redisTimeoutMessage(REDIS_COMMAND_TIMEOUT_MS));
  }
  return null;
}

/**
 * How long web waits for one Redis command (services.ts sets it as ioredis `commandTimeout`). After it
 * the rate limiter falls back to its in-memory twin and queue calls answer 503.
 */
export const REDIS_COMMAND_TIMEOUT_MS = 2_000;

/** ioredis rejects a command with exactly this message when `commandTimeout` passes. */
export const isRedisCommandTimeout = (e: unknown): boolean => e instanceof Error && e.message === "Command timed out";

export const redisTimeoutMessage = (ms: number, what?: string): string =>
  `Redis did not answer within ${ms} ms${what ? ` while trying to ${what}` : ""} — it is connected but not responding (paused, overloaded or stopped); check Redis at REDIS_URL. Retry once it answers`;

/** Redis did not answer in time (ioredis retries while it reconnects; we don't keep a request waiting). */
export class RedisUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RedisUnavailableError";
  }
}

/** Which configured service listens on a port, to name it in a connection error. */
function serviceAt(port: unknown): { name: string; variable: string } | null {
  if (typeof port !== "number") return null;
  const portOf = (get: () => string, fallback: number) => {
    try {
      const u = new URL(get());
      return u.port ? Number(u.port) : fallback;
    } catch {
      return null;
    }
  };
  if (portOf(databaseUrl, 5432) === port) return { name: "PostgreSQL", variable: "DATABASE_URL" };
  if (portOf(redisUrl, 6379) === port) return { name: "Redis", variable: "REDIS_URL" };
  return null;
}
