import type { ErrorClass } from "./connect-error";
import { classifyWsError } from "./ws-driver";

// Kept apart from http-common.ts (undici's pools): a flow or users shard reads HTTP errors and
// redirects without loading undici (755 kB) until a plan's first HTTP request.

const TIMEOUT_CODES = new Set(["UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);
const CLOSED_CODES = new Set(["UND_ERR_SOCKET", "UND_ERR_CLOSED", "UND_ERR_DESTROYED", "UND_ERR_ABORTED"]);

/** Maps an undici (or fetch, which wraps it in `cause`) error to an error class. */
export function classifyHttpError(err: unknown): { errorClass: ErrorClass; detail: string } {
  let e = err as NodeJS.ErrnoException & { cause?: unknown };
  // fetch() rejects with TypeError("fetch failed") and keeps the socket error as its cause.
  while (e && !e.code && e.cause instanceof Error) e = e.cause as typeof e;
  if (!(e instanceof Error)) return { errorClass: "other", detail: String(err) };
  const code = e.code ?? "";
  if (TIMEOUT_CODES.has(code)) return { errorClass: "timeout", detail: code };
  if (CLOSED_CODES.has(code)) return { errorClass: "closed", detail: `${code}: ${e.message}` };
  return classifyWsError(e);
}

/** True when the error means the transport itself is gone (the connection ends), not one request. */
export function isTransportError(errorClass: ErrorClass): boolean {
  return errorClass === "refused" || errorClass === "closed";
}

/**
 * A redirect answer, described for the error it becomes; undefined for any other status. Drivers
 * never follow redirects: a load test measures the URL it was given, and a followed redirect would
 * carry the load (and the plan's headers) to a host the target policy never checked.
 */
export function redirectDetail(status: number, location: string | string[] | null | undefined): string | undefined {
  if (status < 300 || status >= 400 || status === 304) return undefined;
  const to = Array.isArray(location) ? location[0] : location;
  return `HTTP ${status} redirect${to ? ` to ${to}` : ""} not followed: Volley loads only the URL in the plan; set target.url to the final address`;
}
