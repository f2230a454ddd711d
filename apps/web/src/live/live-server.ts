import type { Server as HttpServer } from "node:http";
import { createAdapter } from "@socket.io/redis-adapter";
import { LIVE_FEED, liveSubscribeSchema, type ApiErrorCode } from "@volley/contracts";
import { getRun } from "@volley/db";
import { createRedis } from "@volley/queue";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { Server, type Namespace, type Socket } from "socket.io";
import { authenticate, authorize, type AuthContext } from "@/server/auth/auth";
import { classifyError } from "@/server/http/errors";
import { getDb } from "@/server/http/services";

export interface LiveFeedServer {
  io: Server;
  close(): Promise<void>;
}

/**
 * How often the credentials of connected sockets are checked again: a revoked API token or a
 * signed-out session loses its feed within this (plus the check itself), runs created since included.
 */
export const LIVE_RECHECK_MS = 2_000;

/** What a `subscribe` is answered with (Socket.IO ack). */
export type SubscribeReply = { ok: true } | { ok: false; error: { code: ApiErrorCode; message: string } };

/**
 * The browsers' live feed: Socket.IO namespace /live on web's own HTTP server. The hub emits run
 * updates with the Redis emitter; the Redis adapter delivers them to whichever web replica holds the
 * subscriber. Without Redis the namespace still answers (and single-process emits work), and pages
 * fall back to polling the API.
 */
export function attachLiveFeed(http: HttpServer, opts: { redisUrl: string | null; log: Logger }): LiveFeedServer {
  // destroyUpgrade: false leaves other upgrade requests (Next's dev HMR socket) to their own handlers.
  const io = new Server(http, { serveClient: false, destroyUpgrade: false, transports: ["websocket", "polling"] });
  const clients: Redis[] = [];
  if (opts.redisUrl) {
    const pub = createRedis(opts.redisUrl, { connectionName: "web:live-pub" });
    const sub = createRedis(opts.redisUrl, { connectionName: "web:live-sub" });
    let said = "";
    for (const c of [pub, sub]) {
      clients.push(c);
      c.on("error", (err: Error) => {
        if (err.message !== said) opts.log.warn(`live feed redis: ${err.message} (pages poll until it is back)`);
        said = err.message;
      });
    }
    io.adapter(createAdapter(pub, sub));
  } else {
    opts.log.warn("REDIS_URL is not set: the live feed gets no hub updates; run pages poll instead");
  }

  const live = io.of(LIVE_FEED.namespace);
  // The same authentication and permission as the REST API's run reads, from the handshake's headers
  // (session cookie or token): the feed streams a run's measurements, so a token needs the `read` scope.
  live.use((socket, next) => {
    authenticate(handshakeRequest(socket))
      .then((auth) => {
        authorize(auth, "runs:read");
        socket.data.auth = auth;
        next();
      })
      .catch((err: unknown) => {
        const known = classifyError(err);
        // connect_error: `message` for the reader, `data` in the API's one error shape.
        const refused = Object.assign(new Error(known?.message ?? "not signed in"), {
          data: { error: { code: known?.code ?? "unauthenticated", message: known?.message ?? "not signed in" } },
        });
        next(refused);
      });
  });
  live.on("connection", (socket) => {
    socket.on(LIVE_FEED.events.subscribe, (message: unknown, ack: unknown) => {
      const reply = typeof ack === "function" ? (r: SubscribeReply) => (ack as (r: SubscribeReply) => void)(r) : () => {};
      const parsed = liveSubscribeSchema.safeParse(message);
      if (!parsed.success) return reply({ ok: false, error: { code: "invalid_body", message: "runId: send { runId } naming a run, like run_…" } });
      const { runId } = parsed.data;
      const auth = socket.data.auth as AuthContext;
      getRun(getDb(), runId, auth.orgId)
        .then(async (row) => {
          if (!row) return reply({ ok: false, error: { code: "not_found", message: `run ${runId} does not exist` } });
          await socket.join(LIVE_FEED.room(runId));
          reply({ ok: true });
        })
        .catch((err: unknown) => {
          const known = classifyError(err);
          opts.log.warn({ runId, err: String(err) }, "live subscribe failed");
          reply({ ok: false, error: { code: known?.code ?? "internal", message: known?.message ?? "could not subscribe; the page will poll instead" } });
        });
    });
    socket.on(LIVE_FEED.events.unsubscribe, (message: unknown) => {
      const parsed = liveSubscribeSchema.safeParse(message);
      if (parsed.success) void socket.leave(LIVE_FEED.room(parsed.data.runId));
    });
  });

  let checking = false;
  const recheck = setInterval(() => {
    // A check slower than the interval (a slow database) is not stacked on.
    if (checking) return;
    checking = true;
    void recheckCredentials(live, opts.log).finally(() => (checking = false));
  }, LIVE_RECHECK_MS);
  recheck.unref();

  return {
    io,
    async close() {
      clearInterval(recheck);
      await new Promise<void>((resolve) => io.close(() => resolve()));
      for (const c of clients) c.disconnect();
    },
  };
}

/** The handshake as a Request, so the feed authenticates exactly as the REST API does. */
function handshakeRequest(socket: Socket): Request {
  return new Request(`http://live.local${socket.handshake.url}`, { headers: socket.handshake.headers as Record<string, string> });
}

/**
 * Authenticates every connected socket of this replica again, once per distinct credential, and
 * disconnects those whose token was revoked, whose session ended, or whose org or permission
 * changed. A check that fails for another reason (the database briefly down) keeps the socket: the
 * next one decides.
 */
async function recheckCredentials(live: Namespace, log: Logger): Promise<void> {
  const byCredential = new Map<string, Socket[]>();
  for (const socket of live.sockets.values()) {
    const { authorization = "", cookie = "" } = socket.handshake.headers;
    const key = `${String(authorization)}\n${String(cookie)}`;
    const group = byCredential.get(key);
    if (group) group.push(socket);
    else byCredential.set(key, [socket]);
  }
  await Promise.all(
    [...byCredential.values()].map(async (sockets) => {
      const first = sockets[0]!;
      let reason: string | null = null;
      try {
        const auth = await authenticate(handshakeRequest(first));
        authorize(auth, "runs:read");
        if (auth.orgId !== (first.data.auth as AuthContext).orgId) reason = "the credential now belongs to another org";
      } catch (err) {
        const known = classifyError(err);
        if (known?.code !== "unauthenticated" && known?.code !== "forbidden") return;
        reason = known.message;
      }
      if (!reason) return;
      log.info({ sockets: sockets.length, reason }, "live feed closed: its credential no longer admits it");
      for (const socket of sockets) socket.disconnect(true);
    }),
  );
}
