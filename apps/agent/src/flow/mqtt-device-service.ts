import { pack, unpack } from "msgpackr";
import mqtt from "mqtt";

/** What the device service counted, by its own reckoning (tests compare Volley's counts with these). */
export interface DeviceServiceStats {
  /** Commands received, by the last topic level (cmd, say, bin, raw). */
  received: Record<string, number>;
  /** Replies published, by the topic they went to's last level (ack, said, bin-ack). */
  replied: Record<string, number>;
  /** Commands received at each QoS (the service subscribes at 2, so this is the QoS each was published at). */
  qos: [number, number, number];
  /** Devices (the + level) that sent anything. */
  devices: Set<string>;
  orders: number;
  confirmed: number;
  /** `shipped` events published (one per confirmed order, after its reply). */
  shipped: number;
  /** Confirmations naming an order this service never made. */
  unknownOrders: number;
  /** Payloads it could not read as what their topic says. */
  malformed: number;
  /** Its own connection's errors after it connected, by message. */
  errors: Record<string, number>;
}

export interface DeviceService {
  stats: DeviceServiceStats;
  close(): Promise<void>;
}

/**
 * Test-only: a small "device service", an MQTT application not written for Volley. It subscribes to
 * `devices/+/+` and answers each device on the device's own topics with its own JSON, its own ids
 * and counter:
 * - `devices/<id>/cmd` (JSON `{ cmd, ref? }`): `ping` → `devices/<id>/ack` `{ ackId, device, ref, n, status }`;
 *   `order` → `{ orderId, ref, item }` (a new order); `confirm` (`{ orderId }`) → `{ confirmed, ref }`
 *   for an order it made, then `devices/<id>/events` `{ event: "shipped", orderId, at }`; `{ error, ref }` otherwise.
 * - `devices/<id>/say` (text): → `devices/<id>/said` `ok <n>: <text>`.
 * - `devices/<id>/bin` (MessagePack `{ ref }`): → `devices/<id>/bin-ack` MessagePack `{ ref, n }`.
 * - `devices/<id>/raw` (bytes): counted, not answered.
 * `delayMs` holds every reply back that long (a slow application).
 */
export async function startDeviceService(url: string, opts: { delayMs?: number; username?: string; password?: string } = {}): Promise<DeviceService> {
  const stats: DeviceServiceStats = {
    received: {},
    replied: {},
    qos: [0, 0, 0],
    devices: new Set(),
    orders: 0,
    confirmed: 0,
    shipped: 0,
    unknownOrders: 0,
    malformed: 0,
    errors: {},
  };
  const orders = new Set<string>();
  let n = 0;
  const client = await mqtt.connectAsync(url, { clientId: `device-service-${process.pid}-${Date.now()}`, reconnectPeriod: 0, ...opts });
  client.on("error", (err) => void (stats.errors[err.message] = (stats.errors[err.message] ?? 0) + 1));
  await client.subscribeAsync("devices/+/+", { qos: 2 });
  const reply = (device: string, level: string, payload: string | Buffer) => {
    const send = () => {
      stats.replied[level] = (stats.replied[level] ?? 0) + 1;
      client.publish(`devices/${device}/${level}`, payload, { qos: 0 });
    };
    if (opts.delayMs) setTimeout(send, opts.delayMs);
    else send();
  };
  client.on("message", (topic, payload, packet) => {
    const [, device, kind] = topic.split("/") as [string, string, string];
    if (!["cmd", "say", "bin", "raw"].includes(kind)) return; // its own replies, heard on the same filter
    stats.received[kind] = (stats.received[kind] ?? 0) + 1;
    stats.qos[packet.qos]++;
    stats.devices.add(device);
    n++;
    try {
      if (kind === "cmd") {
        const body = JSON.parse(payload.toString("utf8")) as { cmd?: string; ref?: string; orderId?: string; item?: string };
        if (body.cmd === "order") {
          const orderId = `ord-${n.toString().padStart(5, "0")}`;
          orders.add(orderId);
          stats.orders++;
          return reply(device, "ack", JSON.stringify({ orderId, ref: body.ref, item: body.item }));
        }
        if (body.cmd === "confirm") {
          const known = body.orderId !== undefined && orders.delete(body.orderId);
          if (!known) {
            stats.unknownOrders++;
            return reply(device, "ack", JSON.stringify({ error: "unknown order", ref: body.ref }));
          }
          stats.confirmed++;
          reply(device, "ack", JSON.stringify({ confirmed: body.orderId, ref: body.ref }));
          stats.shipped++;
          return reply(device, "events", JSON.stringify({ event: "shipped", orderId: body.orderId, at: Date.now() }));
        }
        if (body.cmd !== "ping") throw new Error(`unknown cmd ${body.cmd}`);
        return reply(device, "ack", JSON.stringify({ ackId: `a${n}`, device, ref: body.ref, n, status: "ok" }));
      }
      if (kind === "say") return reply(device, "said", `ok ${n}: ${payload.toString("utf8")}`);
      if (kind === "bin") {
        const body = unpack(payload) as { ref?: string };
        if (typeof body.ref !== "string") throw new Error("no ref");
        return reply(device, "bin-ack", pack({ ref: body.ref, n }));
      }
    } catch {
      stats.malformed++;
    }
  });
  return { stats, close: () => client.endAsync() };
}
