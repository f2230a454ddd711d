/**
 * Baseline for bench/mqtt-echo-cpu.ts: the least a Node client can do for the same job as the
 * agent's MQTT echo — N mqtt.js clients over WebSocket, each SUBSCRIBEd to its own topic and
 * PUBLISHing there at QoS 0 (the broker's delivery back is the round trip), open-loop sends at a
 * fixed total rate (one timer loop, no waiting for replies), deliveries counted. Prints one JSON
 * line with its own CPU (process.cpuUsage) from just before connecting to the last reply, the same
 * window the agent reports, in the same shape as ws-echo-client.ts.
 *
 * The work matches the agent's default MQTT echo (mqtt driver, target.mqtt defaults): MQTT 3.1.1,
 * clean session, QoS 0, no retain, a `ws` WebSocket without compression, no reconnects; a 64-byte
 * payload carrying an intended send time as the agent's does.
 *
 *   node --import tsx bench/baseline/mqtt-echo-client.ts <url> <connections> <totalRate> <seconds>
 */
import { randomBytes } from "node:crypto";
import mqtt, { type MqttClient } from "mqtt";

const [url = "ws://127.0.0.1:8080/mqtt", connArg = "100", rateArg = "10000", secArg = "5"] = process.argv.slice(2);
const conns = Number(connArg),
  rate = Number(rateArg),
  seconds = Number(secArg);
const total = Math.round(rate * seconds);
const intervalMs = 1000 / rate;

const cpu0 = process.cpuUsage();
const clients: { client: MqttClient; topic: string }[] = await Promise.all(
  Array.from({ length: conns }, async () => {
    const id = `base-${randomBytes(8).toString("hex")}`;
    const client = await mqtt.connectAsync(url, { clientId: id, protocolVersion: 4, clean: true, reconnectPeriod: 0, queueQoSZero: false });
    const topic = `volley/${id}`;
    await client.subscribeAsync(topic, { qos: 0 });
    return { client, topic };
  }),
);

let received = 0,
  sent = 0;
const done = new Promise<void>((resolve) => {
  for (const { client } of clients)
    client.on("message", () => {
      if (++received === total) resolve();
    });
});
const t0 = performance.now();
const loop = () => {
  const due = Math.min(total, Math.floor((performance.now() - t0) / intervalMs) + 1);
  while (sent < due) {
    const payload = Buffer.alloc(64);
    payload.writeDoubleBE(t0 + sent * intervalMs, 16); // an intended time, as a real client would carry
    const c = clients[sent % conns]!;
    c.client.publish(c.topic, payload, { qos: 0 });
    sent++;
  }
  if (sent < total) setTimeout(loop, 1);
};
loop();
await Promise.race([done, new Promise((r) => setTimeout(r, seconds * 1000 + 10_000))]);
const cpu = process.cpuUsage(cpu0);
process.stdout.write(`${JSON.stringify({ sent, received, cpuSeconds: (cpu.user + cpu.system) / 1e6, wallSeconds: (performance.now() - t0) / 1000 })}\n`);
for (const { client } of clients) client.end(true);
process.exit(0);
