import { isLoopbackAddress } from "@volley/contracts";
import { publicUrl } from "@/env";
import { clientAddressOf } from "./client-address";

/** Request headers as Next hands them to pages (headers()) and route handlers (req.headers). */
type HeaderReader = Pick<Headers, "get">;

/** The address the browser used (behind a proxy: its X-Forwarded-* headers). */
export function requestUrl(headers: HeaderReader): URL {
  const proto = headers.get("x-forwarded-proto")?.split(",")[0]?.trim() || "http";
  const host = headers.get("x-forwarded-host")?.split(",")[0]?.trim() || headers.get("host") || "localhost:3000";
  try {
    return new URL(`${proto === "https" ? "https" : "http"}://${host}`);
  } catch {
    return new URL("http://localhost:3000");
  }
}

/** The origin users reach web at: VOLLEY_PUBLIC_URL, else the one this request used. */
export function publicOrigin(headers: HeaderReader): string {
  return publicUrl() ?? requestUrl(headers).origin;
}

/**
 * Whether the browser reached web over https: VOLLEY_PUBLIC_URL says so, or the proxy in front
 * does (X-Forwarded-Proto). A client that claims https over plain http only gets cookies its own
 * browser will not send back; nothing is weakened for anyone else.
 */
export function isHttpsRequest(headers: HeaderReader): boolean {
  const pub = publicUrl();
  if (pub) return pub.startsWith("https:");
  return requestUrl(headers).protocol === "https:";
}

/** localhost, *.localhost, 127.0.0.0/8 or ::1: a name only the machine itself reaches. */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h.endsWith(".localhost") || isLoopbackAddress(h);
}

/** Plain http to a browser on another machine: passwords and session cookies cross the network in the clear. */
export function plainHttpToAnotherHost(headers: HeaderReader): boolean {
  if (isHttpsRequest(headers)) return false;
  const client = clientAddressOf(headers);
  return client !== "direct" && !isLoopbackHost(client);
}
