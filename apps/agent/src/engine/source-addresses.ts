import { isIPv4, isIPv6 } from "node:net";

/**
 * Source-address pools: one destination (address, port) can be reached from at most one
 * ephemeral-port range per source address (~28K on Linux by default), so holding more connections
 * than that against one target needs several local addresses (on loopback, any of 127.0.0.0/8).
 */

/** A range larger than this is a typo (a whole /16), not a pool anyone binds. */
export const MAX_SOURCE_ADDRESSES = 65_536;

const EXAMPLE = "e.g. 127.0.0.2-127.0.0.9,127.0.1.1";

export type SourceAddressParse = { ok: true; addresses: string[] } | { ok: false; error: string };

/**
 * Parses a comma list of IPv4/IPv6 addresses and inclusive ranges (`127.0.0.2-127.0.0.9`,
 * `fd00::1-fd00::10`) into the addresses, in order, without duplicates.
 * Errors say which item is wrong and what to write instead.
 */
export function parseSourceAddresses(text: string): SourceAddressParse {
  const out: string[] = [];
  const seen = new Set<string>();
  const items = text.split(",").map((s) => s.trim());
  if (items.every((s) => s === "")) return { ok: false, error: `give at least one address, ${EXAMPLE}` };
  for (const item of items) {
    if (item === "") return { ok: false, error: `remove the empty item in the list, ${EXAMPLE}` };
    const dash = item.indexOf("-");
    const expanded = dash < 0 ? single(item) : range(item.slice(0, dash).trim(), item.slice(dash + 1).trim(), out.length);
    if (typeof expanded === "string") return { ok: false, error: expanded };
    for (const a of expanded) if (!seen.has(a)) seen.add(a), out.push(a);
  }
  return { ok: true, addresses: out };
}

function single(item: string): string[] | string {
  if (isIPv4(item) || isIPv6(item)) return [item];
  return `"${item}" is not an IPv4 or IPv6 address; use addresses or ranges, ${EXAMPLE}`;
}

function range(from: string, to: string, already: number): string[] | string {
  const v4 = isIPv4(from) && isIPv4(to);
  const v6 = isIPv6(from) && isIPv6(to);
  if (!v4 && !v6) return `"${from}-${to}" is not a range of two IPv4 or two IPv6 addresses; ${EXAMPLE}`;
  const [lo, hi] = v4 ? [v4ToInt(from), v4ToInt(to)] : [v6ToInt(from), v6ToInt(to)];
  if (hi < lo) return `range "${from}-${to}" runs backwards; put the lower address first`;
  if (hi - lo + 1n + BigInt(already) > BigInt(MAX_SOURCE_ADDRESSES))
    return `"${from}-${to}" makes more than ${MAX_SOURCE_ADDRESSES} addresses; use a smaller range`;
  const out: string[] = [];
  for (let n = lo; n <= hi; n++) out.push(v4 ? intToV4(n) : intToV6(n));
  return out;
}

function v4ToInt(a: string): bigint {
  return a.split(".").reduce((n, part) => (n << 8n) | BigInt(Number(part)), 0n);
}

function intToV4(n: bigint): string {
  return [24n, 16n, 8n, 0n].map((s) => String((n >> s) & 255n)).join(".");
}

function v6ToInt(a: string): bigint {
  // An embedded IPv4 tail (::ffff:1.2.3.4) is two 16-bit groups.
  const m = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (m) {
    const v4 = v4ToInt(m[2]!);
    a = `${m[1]}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head, tail] = a.includes("::") ? a.split("::") : [a, undefined];
  const headGroups = head ? head.split(":") : [];
  const tailGroups = tail ? tail.split(":") : [];
  const zeros = tail === undefined ? [] : Array<string>(8 - headGroups.length - tailGroups.length).fill("0");
  return [...headGroups, ...zeros, ...tailGroups].reduce((n, g) => (n << 16n) | BigInt(parseInt(g, 16)), 0n);
}

function intToV6(n: bigint): string {
  // Uncompressed form: every API that takes an address accepts it, and it needs no :: placement rules.
  const groups: string[] = [];
  for (let s = 112n; s >= 0n; s -= 16n) groups.push(((n >> s) & 0xffffn).toString(16));
  return groups.join(":");
}

/** Round-robin: connection `id` binds address id mod n, so every address carries an equal share. */
export function sourceAddressFor(addresses: readonly string[] | undefined, id: number): { localAddress?: string } {
  if (!addresses || addresses.length === 0) return {};
  return { localAddress: addresses[id % addresses.length]! };
}
