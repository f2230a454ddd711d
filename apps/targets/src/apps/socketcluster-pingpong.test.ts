/// <reference path="./socketcluster-client.d.ts" />
import { create, type AGClientSocket } from "socketcluster-client";
import { afterEach, describe, expect, it } from "vitest";
import type { TestApp } from "./app-http";
import { startSocketclusterPingpong, type SocketclusterPingpongStats } from "./socketcluster-pingpong";

const apps: TestApp<SocketclusterPingpongStats>[] = [];
const sockets: AGClientSocket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.disconnect();
  for (const a of apps.splice(0)) await a.close();
});

async function start() {
  const app = await startSocketclusterPingpong();
  apps.push(app);
  return app;
}

async function open(app: TestApp<unknown>) {
  const s = create({ hostname: "127.0.0.1", port: app.port, path: "/socketcluster/", autoReconnect: false });
  sockets.push(s);
  await s.listener("connect").once(5000);
  const pongs: unknown[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  void (async () => {
    for await (const p of s.receiver("pong")) {
      pongs.push(p);
      for (const w of waiters.filter((w) => pongs.length >= w.n)) w.resolve();
    }
  })();
  const until = (n: number) => new Promise<void>((resolve) => (pongs.length >= n ? resolve() : waiters.push({ n, resolve })));
  return { s, pongs, until };
}

describe("socketcluster pingpong", () => {
  it("answers each ping transmit with a pong transmit carrying the connection's count, not the payload", async () => {
    const app = await start();
    const a = await open(app);
    const b = await open(app);
    for (const data of [{ seq: 1 }, "two", undefined]) void a.s.transmit("ping", data);
    void b.s.transmit("ping", { seq: 99 });
    await Promise.all([a.until(3), b.until(1)]);
    expect(a.pongs).toEqual([{ count: 1 }, { count: 2 }, { count: 3 }]);
    expect(b.pongs).toEqual([{ count: 1 }]);
    const served = await (await fetch(`${app.httpUrl}/stats`)).json();
    expect(served).toEqual({ connections: 2, pings: 4, pongs: 4 });
    expect(served).toEqual(app.stats());
  });

  it("keeps exact counts over a bounded burst", async () => {
    const app = await start();
    const clients = await Promise.all([open(app), open(app), open(app)]);
    for (let i = 0; i < 100; i++) for (const c of clients) void c.s.transmit("ping", i);
    await Promise.all(clients.map((c) => c.until(100)));
    for (const c of clients) expect((c.pongs.at(-1) as { count: number }).count).toBe(100);
    expect(app.stats()).toEqual({ connections: 3, pings: 300, pongs: 300 });
  });
});
