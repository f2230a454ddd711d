import { headers } from "next/headers";
import { plainHttpToAnotherHost } from "@/server/http/request-origin";

/**
 * Says so when this page reached a browser on another machine over plain http: the password typed
 * here and the session cookie cross the network readable by anyone on the path. Signing in works
 * (cookies are Secure only over https), so nothing else would tell the user.
 */
export async function PlainHttpNotice() {
  if (!plainHttpToAnotherHost(await headers())) return null;
  return (
    <div className="callout warn" role="note" data-testid="plain-http-notice">
      <strong>Not encrypted.</strong> This page reached you over plain http from another machine, so your password and session travel readable by anyone on the
      network. Put Volley behind an HTTPS reverse proxy and set <code className="mono">VOLLEY_PUBLIC_URL=https://…</code> (README: Run it).
    </div>
  );
}
