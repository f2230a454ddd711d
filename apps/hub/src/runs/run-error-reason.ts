import { databaseFailure } from "@volley/db";
import { errorMessage, TimeoutError } from "../util/wait";

/**
 * The reason an errored run shows when its execution on this hub threw. A driver's message
 * ("Failed query: select … params: …", "connect ECONNREFUSED 10.0.0.5:5432") tells a user nothing
 * and shows them SQL and addresses: database failures get words instead, and the raw error goes to
 * the hub's log (`rawError`), under the run's id.
 */
export function runErrorReason(err: unknown): string {
  if (err instanceof TimeoutError) return err.message;
  switch (databaseFailure(err)) {
    case "lost":
      return "the hub lost its connection to the database (PostgreSQL) while running this run and could not carry on; what was stored before is kept — start the run again once the database is back (the hub's log has the driver's error)";
    case "query":
      return "a database query of the hub failed while running this run, so it could not carry on; what was stored before is kept (the hub's log has the driver's error)";
    default:
      return `hub error: ${errorMessage(err)}`;
  }
}

/** The error and its causes' messages, for the log (drizzle's "Failed query" alone hides what the driver said). */
export function rawError(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    parts.push(errorMessage(e));
    if (typeof e !== "object") break;
  }
  return parts.join(" ← caused by: ");
}
