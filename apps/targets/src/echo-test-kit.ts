import { afterEach } from "vitest";
import type { WebSocket } from "ws";
import type { HoldMode } from "./echo-hold";
import type { EchoServer, EchoServerOptions } from "./echo-server";

/**
 * Test-only: starts echo servers and tracks client sockets, and tears both down after each test
 * so a failing assertion never leaves a listener or a socket behind.
 */
export function echoTestKit(startServer: (o: EchoServerOptions) => Promise<EchoServer>) {
  const servers: EchoServer[] = [];
  const sockets: WebSocket[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.terminate();
    for (const s of servers.splice(0)) await s.close();
  });
  return {
    async start(delayMs = 0, hold?: HoldMode): Promise<EchoServer> {
      const server = await startServer({ delayMs, ...(hold ? { hold } : {}) });
      servers.push(server);
      return server;
    },
    track<T extends WebSocket>(ws: T): T {
      sockets.push(ws);
      return ws;
    },
  };
}
