import { DrizzleQueryError } from "drizzle-orm/errors";
import pg from "pg";

/** Follows `cause` chains (drizzle wraps the driver's error) and AggregateErrors (a connect to v4 and v6). */
export function* errorCauses(err: unknown): Generator<unknown> {
  const seen = new Set<unknown>();
  const stack: unknown[] = [err];
  while (stack.length > 0) {
    const e = stack.pop();
    if (e === null || e === undefined || seen.has(e)) continue;
    seen.add(e);
    yield e;
    if (e instanceof AggregateError) stack.push(...e.errors);
    if (typeof e === "object" && "cause" in e) stack.push((e as { cause?: unknown }).cause);
  }
}

const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN", "EPIPE"]);
// What node-postgres says, with no code, when the server went away under a client or never answered.
const LOST_MESSAGES = [/connection terminated/i, /not queryable/i, /timeout exceeded when trying to connect/i, /connection timeout/i];

/**
 * What kind of database failure `err` is: `lost` when PostgreSQL could not be reached or dropped
 * the connection (refused, reset, shut down: SQLSTATE class 08 and 57P01-57P03), `query` for any
 * other failed query, null when it is no database error at all. Callers turn it into words for users;
 * the driver's own message (SQL text, parameters, addresses) belongs in their log.
 */
export function databaseFailure(err: unknown): "lost" | "query" | null {
  let query = false;
  let lost = false;
  for (const e of errorCauses(err)) {
    // Only a query's failure counts: Redis and HTTP clients refuse and reset connections too.
    if (e instanceof DrizzleQueryError || e instanceof pg.DatabaseError) query = true;
    if (typeof e !== "object" || e === null) continue;
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && (NETWORK_CODES.has(code) || code.startsWith("08") || /^57P0[123]$/.test(code))) lost = true;
    if (!(e instanceof DrizzleQueryError) && e instanceof Error && LOST_MESSAGES.some((m) => m.test(e.message))) lost = true;
  }
  if (!query) return null;
  return lost ? "lost" : "query";
}
