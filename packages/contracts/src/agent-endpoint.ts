import { AGENT_NAMESPACE } from "./agent-protocol";

/**
 * Where an agent's Socket.IO connection goes for a given HUB_URL. The hub serves its gateway at the
 * Socket.IO default path (/socket.io/); web relays the same gateway under WEB_HUB_PREFIX on its own
 * port, so a second host needs only the address it opens the UI at (http://volley.lan:3000/hub)
 * while the hub itself stays on loopback. A HUB_URL with a path puts the Socket.IO path under it;
 * one without keeps the default, so HUB_URL=http://hub:3001 works as before.
 */
export const WEB_HUB_PREFIX = "/hub";

/** Socket.IO's own default path, which the hub's gateway serves. */
const SOCKET_IO_PATH = "/socket.io";

export interface AgentEndpoint {
  /** What socket.io-client's io() takes: origin plus the agent namespace. */
  url: string;
  /** socket.io-client's `path` option. */
  path: string;
}

export function agentEndpoint(hubUrl: string): AgentEndpoint {
  const u = new URL(hubUrl);
  const base = u.pathname.replace(/\/+$/, "");
  return { url: `${u.origin}${AGENT_NAMESPACE}`, path: `${base}${SOCKET_IO_PATH}` };
}

/** The request path web relays to the hub for `url` (a request under WEB_HUB_PREFIX's Socket.IO path), or null to leave it alone. */
export function hubRelayPath(url: string | undefined): string | null {
  if (!url?.startsWith(`${WEB_HUB_PREFIX}${SOCKET_IO_PATH}/`)) return null;
  return url.slice(WEB_HUB_PREFIX.length);
}
