import type { LookupAddress } from "node:dns";
import type { LookupFunction } from "node:net";
import { describe, expect, it } from "vitest";
import { mqttOptionsSchema, type MqttOptions } from "@volley/contracts";
import { publicOnlyLookup, type ResolveAll } from "@volley/contracts/public-lookup";
import { closeByUs, closed, collect, connectError, driverTestKit, EVERY_BYTE, freePort, roundTrip } from "./driver-test-kit";
import { mosquittoInstalled, startMosquitto } from "./mosquitto-broker";
import { mqttDriver } from "./mqtt-driver";

const kit = driverTestKit();
const options = (o: Partial<MqttOptions> = {}) => mqttOptionsSchema.parse(o);

describe.skipIf(!mosquittoInstalled)("mqtt driver against mosquitto", { timeout: 20_000 }, () => {
  for (const [version, qos] of [
    ["3.1.1", 0],
    ["3.1.1", 1],
    ["5", 2],
  ] as const) {
    it(`echoes every byte through the connection's own topic (MQTT ${version}, QoS ${qos})`, async () => {
      const broker = await kit.serve(startMosquitto());
      const conn = await kit.connect(mqttDriver, { url: broker.url, mqtt: options({ version, qos }) });
      const got = await roundTrip(conn, EVERY_BYTE);
      expect(Buffer.isBuffer(got)).toBe(true);
      expect(Buffer.compare(got as Buffer, EVERY_BYTE)).toBe(0);
      const three = collect(conn, 3);
      for (const n of [1, 2, 3]) conn.send(Buffer.alloc(40, n));
      expect((await three).map((b) => (b as Buffer)[0])).toEqual([1, 2, 3]);
      await closeByUs(conn);
    });
  }

  it("joins a room's topic: every member, the sender too, gets a member's message", async () => {
    const broker = await kit.serve(startMosquitto());
    const mqtt = options({ roomTopic: "chat/{{ conn.room }}" });
    const [a, b, c] = await Promise.all([1, 2, 3].map(() => kit.connect(mqttDriver, { url: broker.url, room: "lobby", mqtt })));
    const outsider = await kit.connect(mqttDriver, { url: broker.url, room: "other", mqtt });
    const seen: string[] = [];
    for (const [label, conn] of [
      ["a", a!],
      ["b", b!],
      ["c", c!],
      ["x", outsider],
    ] as const)
      conn.onMessage((d) => seen.push(`${label}:${(d as Buffer)[0]}`));
    a!.send(Buffer.alloc(40, 9));
    await expect.poll(() => seen.length, { timeout: 3000 }).toBe(3);
    await new Promise((r) => setTimeout(r, 100));
    expect(seen.sort()).toEqual(["a:9", "b:9", "c:9"]);
  });

  it("a retained message replayed on SUBSCRIBE is not handed over as a reply", async () => {
    const broker = await kit.serve(startMosquitto());
    const mqtt = options({ topic: "shared/retained", retain: true, qos: 1 });
    const first = await kit.connect(mqttDriver, { url: broker.url, mqtt });
    expect(Buffer.compare((await roundTrip(first, Buffer.from("kept"))) as Buffer, Buffer.from("kept"))).toBe(0);
    const counted: string[] = [];
    first.onCount!((c) => counted.push(c));
    const second = await kit.connect(mqttDriver, { url: broker.url, mqtt });
    const got: Buffer[] = [];
    second.onMessage((d) => got.push(d as Buffer));
    second.onCount!((c) => counted.push(`second ${c}`));
    await new Promise((r) => setTimeout(r, 300));
    expect(got).toEqual([]);
    second.send(Buffer.from("live"));
    await expect.poll(() => got.map(String), { timeout: 3000 }).toEqual(["live"]);
    // The replay is counted apart; each QoS 1 publish counts its PUBACK (the first's, made before anyone asked, is kept for the asker).
    await expect.poll(() => counted.sort(), { timeout: 3000 }).toEqual(["mqtt.acked", "second mqtt.acked", "second mqtt.retained"]);
  });

  it("connects with username and password; a refused CONNACK names the broker's reason", async () => {
    const broker = await kit.serve(startMosquitto());
    const good = await kit.connect(mqttDriver, { url: broker.authUrl, mqtt: options({ username: broker.user, password: broker.password }) });
    expect(Buffer.compare((await roundTrip(good, EVERY_BYTE)) as Buffer, EVERY_BYTE)).toBe(0);

    expect(await connectError(mqttDriver, { url: broker.authUrl, mqtt: options({ username: broker.user, password: "wrong" }) })).toMatchObject({
      errorClass: "handshake",
      detail: "Connection refused: Not authorized (CONNACK reason code 5)",
    });
    const v5 = await connectError(mqttDriver, { url: broker.authUrl, mqtt: options({ version: "5" }) });
    expect(v5).toMatchObject({
      errorClass: "handshake",
      detail: expect.stringMatching(/^Connection refused: (Not authorized|Bad User Name or Password) \(CONNACK reason code 13[45]\)$/),
    });
  });

  it("MQTT 5: a DISCONNECT from the broker closes the connection with its reason code in words", async () => {
    const broker = await kit.serve(startMosquitto(["max_packet_size 1000"]));
    const conn = await kit.connect(mqttDriver, { url: broker.url, mqtt: options({ version: "5" }) });
    const info = closed(conn);
    conn.send(Buffer.alloc(2000));
    expect(await info).toMatchObject({ byServer: true, errorClass: "protocol", code: 149, reason: "DISCONNECT: Packet too large (reason code 149)" });
  });

  it("hosted mode: resolves the broker through ConnectOptions.lookup; the public-only lookup refuses a name answering 127.0.0.1", async () => {
    const broker = await kit.serve(startMosquitto());
    const url = broker.url.replace("127.0.0.1", "volley-broker.test");
    const plain: LookupFunction = (_host, options, cb) => {
      if (options.all) return (cb as unknown as (e: null, a: LookupAddress[]) => void)(null, [{ address: "127.0.0.1", family: 4 }]);
      cb(null, "127.0.0.1", 4);
    };
    const conn = await kit.connect(mqttDriver, { url, lookup: plain });
    expect(Buffer.compare((await roundTrip(conn, EVERY_BYTE)) as Buffer, EVERY_BYTE)).toBe(0);
    const toLoopback: ResolveAll = (_host, cb) => setImmediate(() => cb(null, [{ address: "127.0.0.1", family: 4 }]));
    const err = await connectError(mqttDriver, { url, lookup: publicOnlyLookup(toLoopback) });
    expect(err.detail).toMatch(/volley-broker\.test resolves to 127\.0\.0\.1 \(loopback\); hosted Volley only reaches public addresses/);
  });

  it("reports the broker going away as a close by the server", async () => {
    const broker = await startMosquitto();
    const conn = await kit.connect(mqttDriver, { url: broker.url });
    const info = closed(conn);
    await broker.close();
    expect(await info).toMatchObject({ byServer: true });
    // mqtt.js saw the close too (its own listeners stay): not connected, its keepalive stopped.
    expect((conn as unknown as { client: { connected: boolean } }).client.connected).toBe(false);
  });
});

describe("mqtt driver without a broker", () => {
  it("an unreachable broker is a refused connect, never a crash", async () => {
    expect(await connectError(mqttDriver, { url: `ws://127.0.0.1:${await freePort()}/mqtt` })).toMatchObject({ errorClass: "refused", detail: "ECONNREFUSED" });
  });
});
