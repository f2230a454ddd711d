import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Server as SocketIoServer } from "socket.io";
import { WebSocketServer } from "ws";

/**
 * Servers that behave as the apps beside Artillery's own example scripts do (examples/websockets,
 * examples/socket-io, examples/http-socketio-server in github.com/artilleryio/artillery: the same
 * routes, events, namespaces and replies, written here), each counting what it received, so a
 * run of the script by Artillery and a run of its import by Volley are compared by the server.
 */
export interface ExampleApp {
  /** What the script's config.target is replaced with. */
  url: string;
  /** The server's own counts, by what it saw (connections, events, requests by route). */
  counts(): Record<string, number>;
  reset(): void;
  close(): Promise<void>;
}

function counter() {
  let c: Record<string, number> = {};
  return {
    add: (k: string) => {
      c[k] = (c[k] ?? 0) + 1;
    },
    counts: () => ({ ...c }),
    reset: () => {
      c = {};
    },
  };
}

const listen = (server: Server) => new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)));
const closeServer = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

/** examples/websockets: a ws server that sends every message back. */
export async function startWsEchoExample(): Promise<ExampleApp> {
  const c = counter();
  const http = createServer((_, res) => res.writeHead(426).end());
  const wss = new WebSocketServer({ server: http, perMessageDeflate: false });
  wss.on("connection", (ws) => {
    c.add("connections");
    ws.on("message", (msg, isBinary) => {
      c.add("messages");
      ws.send(msg, { binary: isBinary });
    });
  });
  const port = await listen(http);
  return {
    url: `ws://127.0.0.1:${port}/`,
    ...c,
    async close() {
      for (const ws of wss.clients) ws.terminate();
      wss.close();
      await closeServer(http);
    },
  };
}

/** examples/socket-io: Socket.IO on path "/", namespace /personalised: echo → echoResponse, userDetails acked with { name }. */
export async function startSocketioExample(): Promise<ExampleApp> {
  const c = counter();
  const http = createServer();
  const io = new SocketIoServer(http, { path: "/", serveClient: false });
  io.of("/personalised").on("connection", (socket) => {
    c.add("connections./personalised");
    socket.on("echo", (msg: unknown) => {
      c.add("events.echo");
      socket.emit("echoResponse", msg);
    });
    socket.on("userDetails", (_: unknown, callback: unknown) => {
      c.add("events.userDetails");
      if (typeof callback === "function") callback({ name: "Artillery" });
    });
  });
  io.on("connection", () => c.add("connections./"));
  const port = await listen(http);
  return {
    url: `http://127.0.0.1:${port}`,
    ...c,
    async close() {
      io.disconnectSockets(true);
      await io.close();
    },
  };
}

/** 150 movies, ids 1–150, as the example's data/movies.json holds (titles of our own). */
const MOVIES = Array.from({ length: 150 }, (_, i) => ({ id: i + 1, title: `Movie number ${i + 1}`, year: 1950 + (i % 70) }));

/**
 * examples/http-socketio-server: GET /movies (the list), GET /movies/:id (one, or an empty body),
 * Socket.IO on the default path and namespace: echo → echoResponse. It has no /login or /logout
 * route (the script's before/after hooks get 404s there, as they do from the example).
 */
export async function startHttpSocketioExample(): Promise<ExampleApp> {
  const c = counter();
  const http = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (path.startsWith("/socket.io/")) return; // Engine.IO's own
    c.add(`http.${req.method} ${path.replace(/^\/movies\/\d+$/, "/movies/:id")}`);
    req.resume();
    const json = (body: unknown) => {
      const text = body === undefined ? "" : JSON.stringify(body);
      res.writeHead(200, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text) }).end(text);
    };
    if (req.method === "GET" && path === "/movies") return json(MOVIES);
    const m = /^\/movies\/(\d+)$/.exec(path);
    if (req.method === "GET" && m) return json(MOVIES.find((x) => x.id === Number(m[1])));
    res.writeHead(404, { "content-type": "text/html" }).end(`Cannot ${req.method} ${path}`);
  });
  const io = new SocketIoServer(http);
  io.on("connection", (client) => {
    c.add("connections./");
    client.on("echo", (m: unknown) => {
      c.add("events.echo");
      client.emit("echoResponse", m);
    });
  });
  const port = await listen(http);
  return {
    url: `http://127.0.0.1:${port}`,
    ...c,
    async close() {
      io.disconnectSockets(true);
      await io.close();
    },
  };
}

/** examples/websockets/my-functions.js's createRandomScore, which the ws script's second scenario calls. */
export const WS_EXAMPLE_PROCESSOR = `module.exports = {
  createRandomScore(userContext, events, done) {
    userContext.vars.data = { timestamp: Date.now(), score: Math.floor(Math.random() * 100) };
    return done();
  },
};
`;
