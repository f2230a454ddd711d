import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { WebSocketServer, type RawData, type WebSocket } from "ws";
import { closeHttp, hostPort, listenHttp } from "../listen-http";
import { asObject, HttpError, idMaker, readJson, requiredString, sendError, sendJson, serveStats, type TestApp, type TestAppOptions } from "./app-http";

export const WS_SHOP_PATHS = { login: "/api/login", socket: "/shop" } as const;

export interface WsShopStats {
  /** Successful `POST /api/login`s. */
  logins: number;
  /** Upgrades refused 401 for a missing or unknown token. */
  badTokens: number;
  /** Sockets accepted. */
  connections: number;
  ordersCreated: number;
  ordersCancelled: number;
  /** Frames answered `{ type: "error" }`: not JSON, an unknown type, a cancel of an order that is not the socket's open one. */
  errors: number;
  /** Sockets the server closed itself (dropAfterMs), as a deploy or an idle-timeout proxy does. */
  drops: number;
}

export interface WsShopOptions extends TestAppOptions {
  /** Close every socket this long after it opened, with 1012 "service restart" (absent: never). */
  dropAfterMs?: number;
  /**
   * Serve `POST /api/login` from an auth service of its own on this port (0: a free one), another
   * origin than the socket's, as an app behind a single sign-on service does; it answers CORS so a
   * page on the shop's origin can call it. Absent: the login is on the socket's own server.
   */
  loginPort?: number;
}

/**
 * The shop; `loginUrl` is the origin its login is served on (the shop's own unless `loginPort` was
 * given). `restart()` closes every open socket at once with 1012, as a deploy does (each counted in
 * drops), and says how many it closed; the shop goes on taking connections.
 */
export type WsShop = TestApp<WsShopStats> & { loginUrl: string; restart(): number };

interface Order {
  id: string;
  userId: string;
  item: string;
  qty: number;
  status: "open" | "cancelled";
}

/**
 * A shop backend as apps write them, not an echo: `POST /api/login` `{ user, password }` →
 * `{ token, userId }` (401 for a wrong password: every password is "secret"); a WebSocket at
 * `/shop?token=…` (no or an unknown token: HTTP 401) speaking its own JSON: `{ type: "order", item,
 * qty }` → `{ type: "order.created", order: { id, item, qty, status: "open" } }` with a server-made
 * id; `{ type: "cancel", orderId }` → `{ type: "order.cancelled", orderId }` only for the user's own
 * open order, anything else `{ type: "error", code, message }`. With `dropAfterMs` it closes every
 * socket that long after it opened (1012), as a deploy does. The server's counters are the truth a
 * load test's counts are checked against.
 */
export async function startWsShop(options: WsShopOptions = {}): Promise<WsShop> {
  const { port = 0, host = "127.0.0.1", dropAfterMs, loginPort } = options;
  const counters: WsShopStats = { logins: 0, badTokens: 0, connections: 0, ordersCreated: 0, ordersCancelled: 0, errors: 0, drops: 0 };
  const stats = () => ({ ...counters });
  const sessions = new Map<string, string>();
  const orders = new Map<string, Order>();
  const userIds = idMaker("usr");
  const orderIds = idMaker("ord");

  const login = (req: IncomingMessage, res: ServerResponse) =>
    void readJson(req)
      .then((raw) => {
        const body = asObject(raw, `POST ${WS_SHOP_PATHS.login}`);
        requiredString(body, "user");
        if (requiredString(body, "password") !== "secret") throw new HttpError(401, "wrong user or password");
        const token = randomBytes(16).toString("hex");
        const userId = userIds();
        sessions.set(token, userId);
        counters.logins++;
        sendJson(res, 200, { token, userId });
      })
      .catch((err: unknown) => sendError(res, err));

  const auth =
    loginPort === undefined
      ? undefined
      : createServer((req, res) => {
          // A browser page on the shop's origin calls it: the preflight and the answer carry CORS.
          res.setHeader("access-control-allow-origin", req.headers.origin ?? "*");
          res.setHeader("access-control-allow-headers", "content-type");
          res.setHeader("access-control-allow-methods", "POST");
          const path = new URL(req.url ?? "/", "http://x").pathname;
          if (req.method === "OPTIONS") return void res.writeHead(204).end();
          if (path === WS_SHOP_PATHS.login && req.method === "POST") return login(req, res);
          sendJson(res, 404, { error: `no route ${req.method} ${path}: this auth service serves POST ${WS_SHOP_PATHS.login}` });
        });
  const authPort = auth ? await listenHttp(auth, loginPort!, host) : undefined;
  const loginUrl = (bound: number) => `http://${hostPort(host, authPort ?? bound)}`;

  const http = createServer((req, res) => {
    if (serveStats(req, res, stats)) return;
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (path === WS_SHOP_PATHS.login && req.method === "POST" && !auth) return login(req, res);
    sendJson(res, 404, {
      error: `no route ${req.method} ${path}: POST ${WS_SHOP_PATHS.login}${auth ? ` (on the auth service, ${loginUrl(0)})` : ""}, a WebSocket at ${WS_SHOP_PATHS.socket}, or GET /stats`,
    });
  });

  const wss = new WebSocketServer({
    server: http,
    path: WS_SHOP_PATHS.socket,
    perMessageDeflate: false,
    verifyClient: (info, done) => {
      const token = new URL(info.req.url ?? "/", "http://x").searchParams.get("token");
      if (token && sessions.has(token)) return done(true);
      counters.badTokens++;
      done(false, 401, "unknown token: log in at POST /api/login and connect with ?token=…");
    },
  });

  const send = (ws: WebSocket, body: unknown) => ws.send(JSON.stringify(body));
  const error = (ws: WebSocket, code: string, message: string) => {
    counters.errors++;
    send(ws, { type: "error", code, message });
  };

  wss.on("connection", (ws, req) => {
    const userId = sessions.get(new URL(req.url ?? "/", "http://x").searchParams.get("token")!)!;
    counters.connections++;
    ws.on("error", () => undefined);
    if (dropAfterMs !== undefined) {
      const timer = setTimeout(() => {
        counters.drops++;
        ws.close(1012, "service restart");
      }, dropAfterMs);
      ws.on("close", () => clearTimeout(timer));
    }
    ws.on("message", (data: RawData) => {
      // A socket the server is closing takes no more orders: it could not answer them.
      if (ws.readyState !== ws.OPEN) return;
      let msg: Record<string, unknown>;
      try {
        msg = JSON.parse(data.toString()) as Record<string, unknown>;
      } catch {
        return error(ws, "bad_json", "frames are JSON objects");
      }
      if (msg.type === "order") {
        const item = typeof msg.item === "string" ? msg.item : String(msg.item ?? "");
        const qty = typeof msg.qty === "number" ? msg.qty : Number(msg.qty ?? 1);
        if (!item || !Number.isInteger(qty) || qty < 1) return error(ws, "bad_order", "an order needs item (a string) and qty (a whole number ≥ 1)");
        const order: Order = { id: orderIds(), userId, item, qty, status: "open" };
        orders.set(order.id, order);
        counters.ordersCreated++;
        return send(ws, { type: "order.created", order: { id: order.id, item, qty, status: order.status } });
      }
      if (msg.type === "cancel") {
        const order = typeof msg.orderId === "string" ? orders.get(msg.orderId) : undefined;
        if (!order || order.userId !== userId || order.status !== "open") return error(ws, "unknown_order", `no open order ${String(msg.orderId)} of yours`);
        order.status = "cancelled";
        counters.ordersCancelled++;
        return send(ws, { type: "order.cancelled", orderId: order.id });
      }
      error(ws, "unknown_type", `unknown type ${JSON.stringify(msg.type)}: send order or cancel`);
    });
  });

  const bound = await listenHttp(http, port, host);
  return {
    port: bound,
    url: `ws://${hostPort(host, bound)}${WS_SHOP_PATHS.socket}`,
    httpUrl: `http://${hostPort(host, bound)}`,
    loginUrl: loginUrl(bound),
    stats,
    restart() {
      let closed = 0;
      for (const c of wss.clients) {
        if (c.readyState !== c.OPEN) continue;
        counters.drops++;
        closed++;
        c.close(1012, "service restart");
      }
      return closed;
    },
    async close() {
      for (const c of wss.clients) c.terminate();
      wss.close();
      await closeHttp(http);
      if (auth) await closeHttp(auth);
    },
  };
}
