import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import type { LookupFunction } from "node:net";
import { isIpAddress, isPublicAddress, nonPublicReason } from "./address-range";

/** Resolves a host to all its addresses (node:dns's lookup by default; tests swap in their own answers). */
export type ResolveAll = (hostname: string, callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

const systemResolveAll: ResolveAll = (hostname, callback) => dnsLookup(hostname, { all: true, verbatim: true }, callback);

export class NonPublicAddressError extends Error {
  readonly code = "VOLLEY_NON_PUBLIC_ADDRESS";
}

/**
 * Node only (node:dns), so not exported from the package's index (web's browser bundle imports it):
 * import it as "@volley/contracts/public-lookup". Used by the hub (webhook delivery) and agents
 * (load connections) in hosted mode.
 *
 * A socket `lookup` for hosted mode that refuses a host if any address it resolves to is not
 * public. The socket connects to the very address checked here: resolving separately and then
 * letting the connection resolve again would let a DNS-rebinding name answer a public address to
 * the check and 127.0.0.1 to the connection.
 */
export function publicOnlyLookup(resolveAll: ResolveAll = systemResolveAll): LookupFunction {
  return (hostname, options, callback) => {
    resolveAll(hostname, (err, addresses) => {
      if (err) return callback(err, "", 0);
      const family = options.family === 4 || options.family === 6 ? options.family : undefined;
      const usable = family ? addresses.filter((a) => a.family === family) : addresses;
      const bad = addresses.find((a) => !isPublicAddress(a.address));
      if (bad) return callback(new NonPublicAddressError(nonPublicReason(hostname, bad.address)), "", 0);
      if (usable.length === 0) return callback(Object.assign(new Error(`${hostname} has no IPv${family} address`), { code: "ENOTFOUND" }), "", 0);
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, usable);
      callback(null, usable[0]!.address, usable[0]!.family);
    });
  };
}

/**
 * The public-only guard of one outbound request from the hub (webhook POST, remote-write push):
 * `{ refused }` when the URL's host is an address literal that is not public (a literal never goes
 * through lookup, so it is checked here), else the request options to spread, which resolve names
 * through publicOnlyLookup (none when `publicOnly` is off: self-hosted reaches any address).
 */
export function publicOnlyRequestOptions(
  url: URL,
  publicOnly: boolean | undefined,
  resolveAll?: ResolveAll,
): { refused: string } | { lookup?: LookupFunction } {
  if (!publicOnly) return {};
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (isIpAddress(host) && !isPublicAddress(host)) return { refused: nonPublicReason(host, host) };
  return { lookup: publicOnlyLookup(resolveAll) };
}
