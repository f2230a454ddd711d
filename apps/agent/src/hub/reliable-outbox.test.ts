import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { pino } from "pino";
import { Server } from "socket.io";
import { io as connect, type Socket } from "socket.io-client";
import type { Ack } from "@volley/contracts";
import { ReliableOutbox } from "./reliable-outbox";

// A real Socket.IO server answering the outbox's messages as a hub would, and the agent's client.

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

async function hubAnswering(answer: (event: string, attempt: number) => Ack) {
  const http = createServer();
  const io = new Server(http);
  const attempts = new Map<string, number>();
  io.on("connection", (socket) => {
    socket.onAny((event: string, _payload: unknown, ack: (a: Ack) => void) => {
      const n = (attempts.get(event) ?? 0) + 1;
      attempts.set(event, n);
      ack(answer(event, n));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const client: Socket = connect(`http://127.0.0.1:${(http.address() as AddressInfo).port}`, { transports: ["websocket"] });
  closers.push(() => new Promise<void>((resolve) => io.close(() => resolve())));
  closers.push(() => void client.close());
  await new Promise<void>((resolve) => client.once("connect", () => resolve()));
  return { client, attempts };
}

describe("ReliableOutbox", () => {
  it("drops a message the hub refuses for good at once, and goes on with the next (an ended lease wedged agents for minutes)", async () => {
    const hub = await hubAnswering((event) => (event === "shard.end" ? { ok: false, error: "not leased", permanent: true } : { ok: true }));
    const outbox = new ReliableOutbox(hub.client, pino({ level: "silent" }), { retryDelayMs: () => 60_000 });
    const dropped: string[] = [];
    const acked: string[] = [];
    outbox.push("shard.end", { shardId: "s1" }, { onDropped: (e) => dropped.push(e), onAcked: () => acked.push("end") });
    outbox.push("frame", { seq: 0 }, { onAcked: () => acked.push("frame") });
    // With a 60 s retry delay, only a drop without retrying empties the spool within the test.
    expect(await outbox.whenIdle(5_000)).toBe(true);
    expect(dropped).toEqual(["not leased"]);
    expect(acked).toEqual(["frame"]);
    expect(hub.attempts.get("shard.end")).toBe(1);
  });

  it("sends a message again after a refusal that may pass (the hub could not store it now)", async () => {
    const hub = await hubAnswering((_event, attempt) => (attempt < 3 ? { ok: false, error: "Redis unavailable; keep it and resend" } : { ok: true }));
    const outbox = new ReliableOutbox(hub.client, pino({ level: "silent" }), { retryDelayMs: () => 10 });
    let acked = false;
    outbox.push("frame", { seq: 0 }, { onAcked: () => (acked = true) });
    expect(await outbox.whenIdle(5_000)).toBe(true);
    expect(acked).toBe(true);
    expect(hub.attempts.get("frame")).toBe(3);
  });
});
