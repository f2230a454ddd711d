import ipaddr from "ipaddr.js";

/**
 * The one classifier of network addresses, shared by web (target and webhook checks when a plan is
 * queued or a webhook created), the hub (webhook delivery, at send time) and agents (connections
 * in hosted mode, at connect time), so all three agree on what "public" means. Every IPv6 form that
 * carries an IPv4 address is judged as that IPv4 address.
 */

/** True for an IPv4 or IPv6 literal (brackets removed), false for a host name. */
export function isIpAddress(host: string): boolean {
  return ipaddr.isValid(host);
}

/**
 * The IPv4 address an IPv6 address carries and reaches, or null: IPv4-mapped (::ffff:a.b.c.d),
 * IPv4-compatible (::a.b.c.d, deprecated but still routed by some stacks), NAT64 (64:ff9b::/96,
 * RFC 6052), 6to4 (2002:AABB:CCDD::/16) and Teredo (2001::/32, the client address inverted in the
 * last 32 bits). Judging the IPv6 form alone let [::169.254.169.254] pass as public unicast.
 */
function embeddedIPv4(ip: ipaddr.IPv6): ipaddr.IPv4 | null {
  const p = ip.parts;
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  if (ip.isIPv4MappedAddress()) return ip.toIPv4Address();
  const zeros = (from: number, to: number) => p.slice(from, to).every((x) => x === 0);
  // ::a.b.c.d, but not :: and ::1 (unspecified and loopback, judged as IPv6).
  if (zeros(0, 6) && (p[6] !== 0 || p[7]! > 1)) return v4(p[6]!, p[7]!);
  if (p[0] === 0x64 && p[1] === 0xff9b && zeros(2, 6)) return v4(p[6]!, p[7]!);
  if (p[0] === 0x2002) return v4(p[1]!, p[2]!);
  if (p[0] === 0x2001 && p[1] === 0) return v4(~p[6]! & 0xffff, ~p[7]! & 0xffff);
  return null;
}

/**
 * ipaddr.js's range of an address, an IPv6 address that carries an IPv4 one classified as that IPv4
 * (embeddedIPv4): "unicast" is a public address; anything else ("private", "loopback", "linkLocal",
 * "uniqueLocal", "carrierGradeNat", "multicast", "reserved", "unspecified" …) is not.
 */
export function addressRange(address: string): string {
  return normalized(address).range();
}

/** Public unicast only; anything unparseable counts as not public. */
export function isPublicAddress(address: string): boolean {
  return ipaddr.isValid(address) && addressRange(address) === "unicast";
}

export function isLoopbackAddress(address: string): boolean {
  return ipaddr.isValid(address) && addressRange(address) === "loopback";
}

/** True for a CIDR range such as 10.0.0.0/8 or fd00::/8 (a valid prefix length for its family). */
export function isAddressRange(entry: string): boolean {
  return ipaddr.isValidCIDR(entry);
}

/** An address as the IPv4 it carries when it carries one (embeddedIPv4), else as parsed. */
function normalized(address: string): ipaddr.IPv4 | ipaddr.IPv6 {
  const ip = ipaddr.parse(address);
  return (ip.kind() === "ipv6" && embeddedIPv4(ip as ipaddr.IPv6)) || ip;
}

/** Whether `address` is `entry` (an address) or inside it (a CIDR range); false for anything else. */
export function addressMatches(entry: string, address: string): boolean {
  try {
    const ip = normalized(address);
    if (entry.includes("/")) {
      const [range, bits] = ipaddr.parseCIDR(entry);
      return ip.kind() === range.kind() && ip.match(range, bits);
    }
    return ipaddr.isValid(entry) && ip.toString() === normalized(entry).toString();
  } catch {
    return false;
  }
}

/** The message for an address hosted Volley refuses to reach. */
export function nonPublicReason(host: string, address: string): string {
  return `the host ${host} resolves to ${address} (${addressRange(address)}); hosted Volley only reaches public addresses — run a self-hosted install for private networks`;
}
