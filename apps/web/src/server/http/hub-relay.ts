import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { createProxyServer } from "httpxy";
import type { Logger } from "pino";
import { hubRelayPath } from "@volley/contracts";
import { clientAddressOf, stampPeer } from "./client-address";

/**
 * Relays the agent gateway through web's own port: /hub/socket.io/… (WebSocket upgrades and the
 * long-polling fallback) goes to the hub's /socket.io/…, and nothing else of the hub does.
 *
 * Why through web rather than a hub port open to the network: a second host then needs only the
 * address its user opens the UI at (one port to open in a firewall, one name in a certificate
 * behind a TLS proxy), while the hub keeps listening on loopback, so its other endpoints
 * (GET /metrics, open by default in self-hosted mode) stay private. What the relay exposes is the
 * agents' door alone, which admits nobody without a join token or the install's bootstrap token
 * (random per install, `.volley/agent-token`).
 *
 * The hub sees the agent's address (for its log and the Agents page) in X-Forwarded-For, set here
 * to the client address web itself believes (its VOLLEY_TRUSTED_PROXIES rules), replacing whatever
 * the client sent; the hub believes that header only from a loopback peer.
 */
export interface HubRelay {
  /** Handles the request if it is the gateway's; false: not ours, let Next have it. */
  request(req: IncomingMessage, res: ServerResponse): boolean;
  /** Same, for an upgrade; false: not ours. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
}

function prepare(req: IncomingMessage): boolean {
  const path = hubRelayPath(req.url);
  if (path === null) return false;
  const address = clientAddressOf({ get: (name) => (req.headers[name] as string | undefined) ?? null });
  req.url = path;
  // The hub needs none of the browser's credentials, and must not be handed a client's own forwarding claims.
  delete req.headers.cookie;
  delete req.headers["x-forwarded-host"];
  delete req.headers["x-forwarded-proto"];
  req.headers["x-forwarded-for"] = address;
  return true;
}

export function createHubRelay(hubUrl: string, log: Logger): HubRelay {
  const proxy = createProxyServer({ target: hubUrl, ws: true, xfwd: false, proxyTimeout: 60_000 });
  proxy.on("error", (err, req, res) => {
    log.warn({ err: err.message, hub: hubUrl, url: req?.url }, "could not relay an agent to the hub");
    if (res && "writeHead" in res && !res.headersSent) {
      res.writeHead(502, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { code: "hub_unavailable", message: `the hub at ${hubUrl} did not answer; is it running (HUB_URL)?` } }));
    } else if (res && "destroy" in res) {
      res.destroy();
    }
  });
  return {
    // server.ts has stamped the peer (stampPeer) before it asks.
    request(req, res) {
      if (!prepare(req)) return false;
      void proxy.web(req, res).catch(() => {});
      return true;
    },
    upgrade(req, socket, head) {
      // Upgrades skip server.ts's request handler, which stamps every other request's peer.
      stampPeer(req);
      if (!prepare(req)) return false;
      void proxy.ws(req, socket as never, {}, head).catch(() => socket.destroy());
      return true;
    },
  };
}

/** Wires the relay into web's server: ahead of Next for requests, beside Socket.IO's live feed for upgrades. */
export function attachHubRelay(http: Server, relay: HubRelay): void {
  http.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    relay.upgrade(req, socket, head);
  });
}
