import { MisconfiguredError } from "@/env";
import { ApiError, classifyError } from "./errors";
import { getLogger, logOnce } from "./log";

/** Server pages show infrastructure problems in words instead of a generic error page. */
export function describeLoadError(err: unknown, what: string): { title: string; message: string; status: number } {
  const known = classifyError(err);
  if (known instanceof MisconfiguredError) {
    logOnce(`misconfigured:${known.message}`, known.message);
    return { title: `Cannot load ${what}: web is not configured`, message: known.message, status: 500 };
  }
  if (known) return { title: `Cannot load ${what}`, message: known.message, status: known.status };
  getLogger().error({ err }, `unhandled error loading ${what}`);
  return { title: `Cannot load ${what}`, message: "Something went wrong on our side; the error has been logged. Reload to try again.", status: 500 };
}

/**
 * Digests error.tsx turns into words. Next shows the browser only an error's digest (never its
 * message, which may name hosts), and keeps a digest the error already has.
 */
export const PAGE_ERROR_DIGESTS = { database: "volley:database-unreachable", redis: "volley:redis-unreachable" } as const;

/**
 * What a server page throws when a backing service is down: the same error, with a digest that
 * names the service, so the error page says the database is unreachable instead of a bare 500.
 * Anything else (redirects, bugs) is returned unchanged.
 */
export function pageError(err: unknown): unknown {
  const known = classifyError(err);
  if (!(known instanceof ApiError) || known.status !== 503) return err;
  // classifyError names the service by its variable ("the database (PostgreSQL at DATABASE_URL) is unreachable …").
  const digest = known.message.includes("DATABASE_URL") ? PAGE_ERROR_DIGESTS.database : known.message.includes("REDIS_URL") ? PAGE_ERROR_DIGESTS.redis : null;
  if (!digest) return err;
  logOnce(`page-unavailable:${known.message}`, known.message);
  return Object.assign(new Error(known.message, { cause: err }), { digest });
}

/** Runs a page's database or Redis call; an outage becomes pageError's readable error. */
export async function forPage<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    throw pageError(err);
  }
}
