import { afterEach, describe, it } from "vitest";
import {
  HTTP_PATHS,
  startHttpTargetServer,
  startSocketclusterEchoServer,
  startSocketioEchoServer,
  startSocketioV2EchoServer,
  startStompEchoServer,
  type EchoServer,
} from "@volley/targets";
import { echoRun } from "../engine/engine-test-kit";

const servers: EchoServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function serve<T extends EchoServer>(s: Promise<T>): Promise<T> {
  const server = await s;
  servers.push(server);
  return server;
}

describe("shard engine over STOMP, SocketCluster, Socket.IO v2 and the HTTP family", { timeout: 20_000 }, () => {
  // The ping-throughput template: the server answers each ping `{count}`, not an echo; the ack (or
  // the invoke's response) still answers that very message, so it is matched and timed.
  it("socket.io ping answered {count} through the ack", async () => {
    const s = await serve(startSocketioEchoServer());
    await echoRun({ url: `${s.url}/ping?delay=20`, protocol: "socketio", socketio: { transports: ["websocket"], event: "ping", ack: true } });
  });

  it("socketcluster ping procedure answered {count}", async () => {
    const s = await serve(startSocketclusterEchoServer());
    await echoRun({ url: `${s.url}?delay=20`, protocol: "socketcluster", socketcluster: { mode: "invoke", event: "ping" } });
  });

  it("stomp over websocket", async () => {
    const s = await serve(startStompEchoServer());
    await echoRun({ url: `${s.url}?delay=20`, protocol: "stomp" });
  });

  for (const mode of ["invoke", "transmit"] as const) {
    it(`socketcluster ${mode}`, async () => {
      const s = await serve(startSocketclusterEchoServer());
      await echoRun({ url: `${s.url}?delay=20`, protocol: "socketcluster", socketcluster: { mode } });
    });
  }

  it("socketcluster publish to the connection's own channel (channel messages are never held)", async () => {
    const s = await serve(startSocketclusterEchoServer());
    await echoRun({ url: `${s.url}?delay=20`, protocol: "socketcluster", socketcluster: { mode: "publish" } }, 0);
  });

  it("socket.io v2 (Engine.IO 3) with acks over polling", async () => {
    const s = await serve(startSocketioV2EchoServer());
    await echoRun({ url: `${s.url}/?delay=20`, protocol: "socketio", socketio: { version: 2, ack: true, transports: ["polling"] } });
  });

  it("sse + POST", async () => {
    const s = await serve(startHttpTargetServer());
    await echoRun({ url: `${s.url}${HTTP_PATHS.sse}?delay=20`, protocol: "sse" });
  });

  it("long polling", async () => {
    const s = await serve(startHttpTargetServer());
    await echoRun({ url: `${s.url}/poll?delay=20`, protocol: "long-polling" });
  });

  it("short polling every 50 ms: a reply waits for the next poll", async () => {
    const s = await serve(startHttpTargetServer());
    await echoRun({ url: `${s.url}/poll?delay=20`, protocol: "short-polling", polling: { interval: "50ms" } });
  });

  it("plain http POST, the response is the reply", async () => {
    const s = await serve(startHttpTargetServer());
    await echoRun({ url: `${s.url}${HTTP_PATHS.echo}?delay=20`, protocol: "http", http: { method: "POST" } });
  });
});
