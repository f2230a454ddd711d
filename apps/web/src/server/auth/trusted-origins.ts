import { hostname, networkInterfaces } from "node:os";
import { publicUrl, serverOptions } from "@/env";

/**
 * The origins allowed to post to the auth routes (better-auth's CSRF/origin check): VOLLEY_PUBLIC_URL
 * when set, and this server itself as a browser on this machine or the LAN reaches it — localhost,
 * every address of every local interface and the host name, at the port web listens on. Without
 * this list better-auth trusts only the origin of the URL Next hands it, which is
 * http://0.0.0.0:3000 when web binds every interface (the default), so sign-up from
 * http://localhost:3000 was refused. Foreign origins stay refused; a request's own Host header is
 * never trusted, as that would let a DNS-rebinding page claim a fresh install's owner account.
 */
export function trustedOrigins(): string[] {
  const { port } = serverOptions();
  const hosts = new Set<string>(["localhost", "127.0.0.1", "[::1]", hostname().toLowerCase()]);
  for (const addrs of Object.values(networkInterfaces())) {
    for (const a of addrs ?? []) {
      if (a.family === "IPv4") hosts.add(a.address);
      else if (!a.address.startsWith("fe80")) hosts.add(`[${a.address}]`);
    }
  }
  const origins = [...hosts].flatMap((h) => [`http://${h}:${port}`, `https://${h}:${port}`]);
  // On the default ports a browser sends the origin without one.
  if (port === 80) origins.push(...[...hosts].map((h) => `http://${h}`));
  if (port === 443) origins.push(...[...hosts].map((h) => `https://${h}`));
  const pub = publicUrl();
  if (pub) origins.unshift(new URL(pub).origin);
  return origins;
}
