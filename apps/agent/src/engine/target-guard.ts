import { lookup } from "node:dns/promises";
import { isIpAddress, isPublicAddress, nonPublicReason } from "@volley/contracts";

/**
 * Hosted mode, before a shard's first connection: why its target may not be loaded (the host is,
 * or resolves to, an address that is not public), or null. Web checked the same when the run was
 * queued; this catches a name re-pointed since. Each connection's own lookup checks again
 * (ConnectOptions.lookup) — the only check that also covers an address literal is this one, since
 * sockets never look literals up.
 */
export async function refusedTarget(url: string, resolveAll: (host: string) => Promise<string[]> = systemResolveAll): Promise<string | null> {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
  let addresses: string[];
  if (isIpAddress(host)) addresses = [host];
  else {
    try {
      addresses = await resolveAll(host);
    } catch {
      // Unresolvable: every connection fails and is counted with its DNS error, as in self-hosted mode.
      return null;
    }
  }
  const bad = addresses.find((a) => !isPublicAddress(a));
  return bad ? `target refused: ${nonPublicReason(host, bad)}` : null;
}

async function systemResolveAll(host: string): Promise<string[]> {
  return (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
}
