import type { ConnectOptions } from "./driver";

/*
 * Nothing here loads undici: the plain HTTP driver (its own sockets) imports from this file, and an
 * engine thread running it should not parse undici. Pools are in connection-pool.ts.
 */
export { classifyHttpError, isTransportError, redirectDetail } from "./http-errors";

/** The request headers a plan asked for, merged over the protocol's own. */
export function withHeaders(opts: ConnectOptions, own: Record<string, string>): Record<string, string> {
  return { ...own, ...opts.headers };
}

/** Path and query of `url` as undici's request() takes it. */
export function pathOf(url: URL): string {
  return `${url.pathname}${url.search}`;
}

export { withRoom } from "./room-url";
