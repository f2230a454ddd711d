/// <reference path="./socketcluster-server.d.ts" />
import { createServer, type IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { attach, type AGServerSocket } from "socketcluster-server";
import { EchoHold, parseDelay } from "./echo-hold";
import type { EchoServer, EchoServerOptions } from "./echo-server";
import { closeHttp, hostPort, listenHttp } from "./listen-http";

export const SOCKETCLUSTER_PATH = "/socketcluster/";
/** Procedure answered with its payload, and receiver answered by a transmit of the same name. */
export const SOCKETCLUSTER_ECHO_EVENT = "echo";
/** Procedure answered with `{ count }`, the pings this connection sent (the SocketCluster 2014 ping-throughput benchmark). */
export const SOCKETCLUSTER_PING_PROCEDURE = "ping";

function rejectUpgrade(socket: Duplex, status: number, text: string): void {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

/**
 * A stock socketcluster-server (v20) at `/socketcluster/`: invoke `echo` → the response is the
 * payload; transmit `echo` → a transmit `echo` back with it; invoke `ping` → `{ count }`; channels
 * are SocketCluster's own (a publish reaches every subscriber of the channel, the publisher
 * included). `?delay=<ms>` overrides the server's hold for that connection's echo and ping
 * replies; channel publishes are never held (the hold is the echo's ground truth, not the room's).
 * Path and delay are checked before SocketCluster sees the upgrade, so a wrong one is an HTTP 404
 * or 400 as on the other targets.
 */
export async function startSocketclusterEchoServer(options: EchoServerOptions = {}): Promise<EchoServer> {
  const { port = 0, host = "127.0.0.1", delayMs = 0 } = options;
  const hold = new EchoHold(options.hold);
  const delays = new WeakMap<IncomingMessage, number>();

  const http = createServer((_req, res) => {
    res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
  });
  // SocketCluster attaches its WebSocket server to this one; it never listens, and only gets the
  // upgrades that passed the checks below.
  const scHttp = createServer();
  const sc = attach(scHttp, { path: SOCKETCLUSTER_PATH, perMessageDeflate: false });

  http.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname !== SOCKETCLUSTER_PATH) return rejectUpgrade(socket, 404, "Not Found");
    const delay = parseDelay(url.searchParams.get("delay"), delayMs);
    if (delay === undefined) return rejectUpgrade(socket, 400, "Bad Request");
    delays.set(req, delay);
    scHttp.emit("upgrade", req, socket, head);
  });

  const serve = (socket: AGServerSocket) => {
    const replies = hold.queue<() => void>(delays.get(socket.request) ?? delayMs, (reply) => {
      if (socket.state === "open") reply();
    });
    void (async () => {
      for await (const req of socket.procedure(SOCKETCLUSTER_ECHO_EVENT)) replies.push(() => req.end(req.data));
    })();
    void (async () => {
      for await (const data of socket.receiver(SOCKETCLUSTER_ECHO_EVENT)) replies.push(() => void socket.transmit(SOCKETCLUSTER_ECHO_EVENT, data));
    })();
    void (async () => {
      let count = 0;
      for await (const req of socket.procedure(SOCKETCLUSTER_PING_PROCEDURE)) {
        const reply = { count: ++count };
        replies.push(() => req.end(reply));
      }
    })();
    void socket
      .listener("close")
      .once()
      .then(() => replies.dispose());
  };
  void (async () => {
    for await (const { socket } of sc.listener("connection")) serve(socket);
  })();
  // Client-caused errors (bad packets, a client gone mid-reply) are the client's problem, and the
  // streams would otherwise buffer them forever.
  for (const name of ["error", "warning"] as const) {
    void (async () => {
      for await (const _ of sc.listener(name));
    })();
  }

  const actualPort = await listenHttp(http, port, host);

  return {
    port: actualPort,
    url: `ws://${hostPort(host, actualPort)}${SOCKETCLUSTER_PATH}`,
    stall: (ms: number) => hold.stall(ms),
    holdStats: () => hold.stats.summary(),
    resetHoldStats: () => hold.stats.reset(),
    connections: () => sc.clientsCount,
    async close() {
      hold.clear();
      await sc.close();
      await closeHttp(http);
    },
  };
}
