import { afterEach, describe, expect, it } from "vitest";
import { planSchema } from "@volley/contracts";
import { startSocketioEchoServer, startSockjsEchoServer, type EchoServer } from "@volley/targets";
import { runShard } from "./run-shard";
import { echoRun } from "./engine-test-kit";

const servers: EchoServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function socketio(): Promise<string> {
  const server = await startSocketioEchoServer();
  servers.push(server);
  return `${server.url}/?delay=20`;
}

async function sockjs(): Promise<string> {
  const server = await startSockjsEchoServer();
  servers.push(server);
  return `${server.url}?delay=20`;
}

describe("shard engine over Socket.IO and SockJS", { timeout: 20_000 }, () => {
  it("socket.io, reply as an event", async () => {
    await echoRun({ url: await socketio(), protocol: "socketio" });
  });

  it("socket.io, reply through the ack, websocket only", async () => {
    await echoRun({ url: await socketio(), protocol: "socketio", socketio: { ack: true, transports: ["websocket"] } });
  });

  it("socket.io, polling only", async () => {
    await echoRun({ url: await socketio(), protocol: "socketio", socketio: { transports: ["polling"] } });
  });

  it("sockjs over xhr-streaming", async () => {
    await echoRun({ url: await sockjs(), protocol: "sockjs", sockjs: { transports: ["xhr-streaming"] } });
  });

  it("sockjs over websocket", async () => {
    await echoRun({ url: await sockjs(), protocol: "sockjs", sockjs: { transports: ["websocket"] } });
  });

  it("ends errored with the class when nothing listens", async () => {
    const server = await startSocketioEchoServer();
    const url = server.url;
    await server.close();
    const plan = planSchema.parse({
      name: "refused",
      target: { url, protocol: "socketio", connectTimeout: "2s", socketio: { transports: ["websocket"] } },
      connections: { count: 3, rate: 100 },
      scenario: { kind: "echo", message: { rate: 1 }, duration: "1s" },
    });
    const outcome = await runShard(plan, { startAt: Date.now() + 20, onFrame: () => {} });
    expect(outcome.status).toBe("errored");
    expect(outcome.error).toContain("connect refused");
  });
});
