/// <reference path="../socketcluster-server.d.ts" />
import { createServer } from "node:http";
import { attach, type AGServerSocket } from "socketcluster-server";
import { closeHttp, hostPort, listenHttp } from "../listen-http";
import { sendJson, serveStats, type TestApp, type TestAppOptions } from "./app-http";

export const SOCKETCLUSTER_PINGPONG_PATH = "/socketcluster/";
export const SOCKETCLUSTER_PING_EVENT = "ping";
export const SOCKETCLUSTER_PONG_EVENT = "pong";

export interface SocketclusterPingpongStats {
  /** SocketCluster connections accepted. */
  connections: number;
  /** `ping` transmits received. */
  pings: number;
  /** `pong` transmits sent. */
  pongs: number;
}

/**
 * A stock socketcluster-server (v20) at `/socketcluster/` that answers the way real SocketCluster
 * apps do, on ANOTHER event: a client transmits `ping` with any data and the server transmits
 * `pong` `{ count }`, that connection's pings so far (1, 2, …). The ping's payload is not echoed:
 * a reply can only be matched as "the next pong" or by the count.
 */
export async function startSocketclusterPingpong(options: TestAppOptions = {}): Promise<TestApp<SocketclusterPingpongStats>> {
  const { port = 0, host = "127.0.0.1" } = options;
  const counters: SocketclusterPingpongStats = { connections: 0, pings: 0, pongs: 0 };
  const stats = () => ({ ...counters });

  const http = createServer((req, res) => {
    if (!serveStats(req, res, stats))
      sendJson(res, 404, { error: `no route ${req.method} ${req.url}: connect SocketCluster to ${SOCKETCLUSTER_PINGPONG_PATH}, or GET /stats` });
  });
  const sc = attach(http, { path: SOCKETCLUSTER_PINGPONG_PATH, perMessageDeflate: false });

  const serve = (socket: AGServerSocket) => {
    counters.connections++;
    void (async () => {
      let count = 0;
      for await (const _ of socket.receiver(SOCKETCLUSTER_PING_EVENT)) {
        counters.pings++;
        count++;
        if (socket.state !== "open") continue;
        counters.pongs++;
        void socket.transmit(SOCKETCLUSTER_PONG_EVENT, { count }).catch(() => undefined);
      }
    })();
  };
  void (async () => {
    for await (const { socket } of sc.listener("connection")) serve(socket);
  })();
  // Client-caused errors (bad packets, a client gone mid-reply) would otherwise buffer forever.
  for (const name of ["error", "warning"] as const) {
    void (async () => {
      for await (const _ of sc.listener(name));
    })();
  }

  const actualPort = await listenHttp(http, port, host);
  return {
    port: actualPort,
    url: `ws://${hostPort(host, actualPort)}${SOCKETCLUSTER_PINGPONG_PATH}`,
    httpUrl: `http://${hostPort(host, actualPort)}`,
    stats,
    async close() {
      await sc.close();
      await closeHttp(http);
    },
  };
}
