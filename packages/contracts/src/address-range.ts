import ipaddr from "ipaddr.js";

/**
 * The one classifier of network addresses, shared by web (target and webhook checks when a plan is
 * queued or a webhook created), the hub (webhook delivery, at send time) and agents (connections
 * in hosted mode, at connect time), so all three agree on what "public" means.
 */

/** True for an IPv4 or IPv6 literal (brackets removed), false for a host name. */
export function isIpAddress(host: string): boolean {
  return ipaddr.isValid(host);
}

/**
 * ipaddr.js's range of an address, an IPv4-mapped IPv6 address classified as the IPv4 it carries:
 * "unicast" is a public address; anything else ("private", "loopback", "linkLocal", "uniqueLocal",
 * "carrierGradeNat", "multicast", "reserved", "unspecified" …) is not.
 */
export function addressRange(address: string): string {
  return ipaddr.process(address).range();
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

/** Whether `address` is `entry` (an address) or inside it (a CIDR range); false for anything else. */
export function addressMatches(entry: string, address: string): boolean {
  try {
    const ip = ipaddr.process(address);
    if (entry.includes("/")) {
      const [range, bits] = ipaddr.parseCIDR(entry);
      return ip.kind() === range.kind() && ip.match(range, bits);
    }
    return ipaddr.isValid(entry) && ip.toString() === ipaddr.process(entry).toString();
  } catch {
    return false;
  }
}

/** The message for an address hosted Volley refuses to reach. */
export function nonPublicReason(host: string, address: string): string {
  return `the host ${host} resolves to ${address} (${addressRange(address)}); hosted Volley only reaches public addresses — run a self-hosted install for private networks`;
}
