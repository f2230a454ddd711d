import type { IncomingMessage } from "node:http";
import ipaddr from "ipaddr.js";
import { trustedProxies } from "@/env";

/**
 * The header server.ts writes the TCP peer's address into before Next sees a request (route
 * handlers get a Request without the socket). Whatever a client sends under this name is deleted
 * first, so only the server can set it.
 */
export const PEER_HEADER = "x-volley-peer";

/** server.ts: replaces any client-sent PEER_HEADER with the socket's own peer address. */
export function stampPeer(req: IncomingMessage): void {
  delete req.headers[PEER_HEADER];
  const peer = req.socket.remoteAddress;
  if (peer) req.headers[PEER_HEADER] = peer;
}

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** A strict address (dotted-quad IPv4 or IPv6, optionally `[v6]:port` or `v4:port` as some proxies write), IPv4-mapped IPv6 unwrapped. */
function parse(text: string | null | undefined): Address | null {
  if (!text) return null;
  let s = text.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(s);
  if (bracketed) s = bracketed[1]!;
  else if (/^[\d.]+:\d+$/.test(s)) s = s.slice(0, s.lastIndexOf(":"));
  if (!ipaddr.IPv4.isValidFourPartDecimal(s) && !ipaddr.IPv6.isValid(s)) return null;
  return ipaddr.process(s);
}

function trusts(entries: readonly string[]): (a: Address) => boolean {
  const ranges = entries.map((e) => (e.includes("/") ? ipaddr.parseCIDR(e) : ([ipaddr.process(e), ipaddr.process(e).kind() === "ipv4" ? 32 : 128] as const)));
  return (a) => ranges.some(([range, bits]) => a.kind() === range.kind() && a.match(range, bits));
}

/**
 * The client's address for rate limiting: the socket peer, unless that peer is a trusted proxy
 * (VOLLEY_TRUSTED_PROXIES), in which case X-Forwarded-For is walked from the right past trusted
 * proxies to the first address one of them vouches for. Without a trusted proxy in front, a client's
 * own X-Forwarded-For is ignored (rotating it used to give every attempt a fresh limit). "direct"
 * when no peer is known (a request that did not come through server.ts, e.g. `next dev`).
 */
export function clientAddress(req: Request, trusted: readonly string[] = trustedProxies()): string {
  return clientAddressOf(req.headers, trusted);
}

/** clientAddress for anything with request headers (a Node request's, wrapped: the hub relay). */
export function clientAddressOf(headers: Pick<Headers, "get">, trusted: readonly string[] = trustedProxies()): string {
  const peer = parse(headers.get(PEER_HEADER));
  if (!peer) return "direct";
  const isTrusted = trusts(trusted);
  let client = peer;
  const hops = (headers.get("x-forwarded-for") ?? "")
    .split(",")
    .map((h) => h.trim())
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0 && isTrusted(client); i--) {
    const hop = parse(hops[i]);
    // Garbage where a proxy should have written an address: stop at the last proxy we believe.
    if (!hop) break;
    client = hop;
  }
  return client.toString();
}
