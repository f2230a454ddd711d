/**
 * web's process: Next's request handler and the Socket.IO live feed (/live) on one HTTP server.
 * `npm start` (devstack) and the end-to-end tests run this with `node --import tsx server.ts`;
 * `next build` is unchanged, and `next dev` still works without the live feed (pages poll).
 */
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import path from "node:path";
import { parse } from "node:url";
import next from "next";
import { authSecret, hubInternalUrl, MisconfiguredError, optionalRedisUrl, secretsKeys, serverOptions } from "./src/env";
import { attachLiveFeed } from "./src/live/live-server";
import { stampPeer } from "@/server/http/client-address";
import { attachHubRelay, createHubRelay } from "@/server/http/hub-relay";
import { getLogger } from "@/server/http/log";
import { closeServices } from "@/server/http/services";

const log = getLogger();
let options: ReturnType<typeof serverOptions>;
let redisUrl: string | null;
let hubUrl: string;
try {
  options = serverOptions();
  redisUrl = optionalRedisUrl();
  hubUrl = hubInternalUrl();
  // No AUTH_SECRET (or a short one) stops web now, not at the first sign-in.
  authSecret();
  // A bad VOLLEY_SECRETS_KEY (or none in hosted mode) stops web now, not at the first webhook created.
  if (!secretsKeys())
    log.warn("VOLLEY_SECRETS_KEY is not set; webhook signing secrets are stored unencrypted — set it (openssl rand -base64 32) for web and hub");
} catch (err) {
  process.stderr.write(`web could not start: ${err instanceof MisconfiguredError ? err.message : String(err)}\n`);
  process.exit(1);
}

// Next's standalone output (the web image) ships no next.config.ts: hand Next the configuration the
// build used, as the server.js Next writes for standalone output does.
const standaloneConfig = path.join(import.meta.dirname, ".next", "required-server-files.json");
if (!existsSync(path.join(import.meta.dirname, "next.config.ts")) && existsSync(standaloneConfig)) {
  process.env.__NEXT_PRIVATE_STANDALONE_CONFIG ??= JSON.stringify((JSON.parse(readFileSync(standaloneConfig, "utf8")) as { config: unknown }).config);
}
const app = next({ dev: options.dev, dir: import.meta.dirname, hostname: options.host, port: options.port });
const handle = app.getRequestHandler();
await app.prepare();

const relay = createHubRelay(hubUrl, log);
const http = createServer((req, res) => {
  // Route handlers see no socket: hand them the peer address (rate limits, client-address.ts).
  stampPeer(req);
  // Agents on other hosts reach the hub's gateway through this port (/hub/socket.io/, hub-relay.ts).
  if (relay.request(req, res)) return;
  void handle(req, res, parse(req.url ?? "/", true));
});
const live = attachLiveFeed(http, { redisUrl, log });
attachHubRelay(http, relay);
if (options.dev) {
  // Next's HMR socket; Socket.IO and the hub relay leave upgrades outside their paths alone (destroyUpgrade: false).
  const upgrade = app.getUpgradeHandler();
  http.on("upgrade", (req, socket, head) => {
    if (!req.url?.startsWith("/socket.io/") && !req.url?.startsWith("/hub/")) void upgrade(req, socket, head);
  });
}

http.once("error", (err: NodeJS.ErrnoException) => {
  const hint = err.code === "EADDRINUSE" ? ` (port ${options.port} is in use: set WEB_PORT to a free port)` : "";
  process.stderr.write(`web could not start: ${err.message}${hint}\n`);
  process.exit(1);
});
/**
 * The first page Next renders pays for its renderer's first run (~0.4 s on a 2-core machine, the
 * run page's cold first paint, issue 17): one page without a session (sign-in, or sign-up), asked of
 * ourselves before "ready", so the first visitor after a start or a deploy does not pay it.
 */
async function warmUp(): Promise<void> {
  const address = http.address();
  if (options.dev || !address || typeof address === "string") return;
  const host = address.address === "0.0.0.0" || address.address === "::" ? "127.0.0.1" : address.family === "IPv6" ? `[${address.address}]` : address.address;
  try {
    const res = await fetch(`http://${host}:${address.port}/sign-in`, { signal: AbortSignal.timeout(5000) });
    await res.arrayBuffer();
  } catch {
    // A page that cannot render yet (database away) is no reason to hold the server back.
  }
}

http.listen(options.port, options.host, () => {
  void warmUp().finally(() =>
    log.info(
      `web ready on http://${options.host}:${options.port} (live feed /live${redisUrl ? "" : ", no Redis: pages poll"}; agents relayed to the hub at ${hubUrl} through /hub)`,
    ),
  );
});

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) process.exit(1);
  stopping = true;
  log.info(`${signal} received, stopping web`);
  setTimeout(() => process.exit(1), 10_000).unref();
  // io.close() also closes the HTTP server: no new requests, live sockets told to go.
  await live.close().catch(() => {});
  await app.close?.().catch(() => {});
  await closeServices();
  process.exit(0);
}
process.on("SIGINT", () => void shutdown("SIGINT"));
process.on("SIGTERM", () => void shutdown("SIGTERM"));
