import { describe, expect, it } from "vitest";
import { startSocketioEchoServer, startSockjsEchoServer, startWsEchoServer } from "@volley/targets";
import type { ConnectOptions, Driver } from "./driver";
import { connectError, driverTestKit } from "./driver-test-kit";
import { socketioDriver } from "./socketio-driver";
import { sockjsDriver } from "./sockjs-driver";
import { wsDriver } from "./ws-driver";

const kit = driverTestKit();

type Extra = Partial<Omit<ConnectOptions, "url" | "connectTimeoutMs">>;

/**
 * Rooms on the echo targets, through each driver: a member's message goes to every other member
 * of its room and back to the sender (the echo), never to a connection outside the room.
 */
async function roomCase(driver: Driver, url: string, extra: Extra = {}) {
  const [a, b, c] = await Promise.all([1, 2, 3].map(() => kit.connect(driver, { url, room: "lobby", ...extra })));
  const outsider = await kit.connect(driver, { url, room: "elsewhere", ...extra });
  const seen: string[] = [];
  for (const [label, conn] of [
    ["a", a!],
    ["b", b!],
    ["c", c!],
    ["x", outsider],
  ] as const) {
    conn.onMessage((d) => seen.push(`${label}:${Buffer.from(d as Buffer)[0]}`));
  }
  a!.send(Buffer.alloc(40, 9));
  await expect.poll(() => seen.length, { timeout: 3000 }).toBe(3);
  await new Promise((r) => setTimeout(r, 100));
  expect(seen.sort()).toEqual(["a:9", "b:9", "c:9"]);
}

describe("rooms on the echo targets", () => {
  it("ws: ?room= on the URL", async () => {
    const server = await kit.serve(startWsEchoServer());
    await roomCase(wsDriver, server.url);
    expect(await connectError(wsDriver, { url: server.url, room: "" })).toMatchObject({ errorClass: "handshake", detail: "HTTP 400" });
  });

  it("sockjs: ?room= on the URL, over websocket and xhr-streaming", async () => {
    const server = await kit.serve(startSockjsEchoServer());
    await roomCase(sockjsDriver, server.url, { sockjs: { transports: ["websocket"] } });
    await roomCase(sockjsDriver, server.url, { sockjs: { transports: ["xhr-streaming"] } });
  });

  it("socket.io: a join event with an ack, replies as events and through the ack", async () => {
    const server = await kit.serve(startSocketioEchoServer());
    const base = { event: "echo", path: "/socket.io", version: 4, parser: "default" } as const;
    await roomCase(socketioDriver, server.url, { socketio: { ...base, transports: ["websocket"], ack: false } });
    await roomCase(socketioDriver, server.url, { socketio: { ...base, transports: ["polling"], ack: true } });
    const refused = await connectError(socketioDriver, {
      url: server.url,
      room: "x".repeat(201),
      socketio: { ...base, transports: ["websocket"], ack: false },
    });
    expect(refused).toMatchObject({ errorClass: "handshake", detail: expect.stringContaining("join") });
  });
});
