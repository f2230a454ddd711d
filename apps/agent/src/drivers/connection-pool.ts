import { buildConnector, Pool } from "undici";
import type { ConnectOptions } from "./driver";

/**
 * One keep-alive pool per load connection, so every connection has its own sockets as a browser
 * would: `sockets` is how many requests may be in flight at once (a held poll or event stream
 * plus sends needs two).
 */
export function connectionPool(opts: ConnectOptions, sockets: number, pipelining = 1): Pool {
  const origin = new URL(opts.url).origin;
  return new Pool(origin, {
    connections: sockets,
    pipelining,
    connect: buildConnector({
      timeout: opts.connectTimeoutMs,
      ...(opts.localAddress ? { localAddress: opts.localAddress } : {}),
      ...(opts.lookup ? { lookup: opts.lookup } : {}),
    }),
    // Streams and held polls are idle for long stretches by design; the engine owns timeouts.
    headersTimeout: 0,
    bodyTimeout: 0,
  });
}
