/**
 * MQTT over WebSocket in front of a mosquitto whose package cannot open a WebSocket listener
 * (Debian 12's 2.0.11: "Unable to start any listening sockets"): each WebSocket's binary frames go
 * to mosquitto's MQTT port and back, byte for byte, as apps/agent/src/drivers/mosquitto-broker.ts
 * does for the tests. Its own process, so a bench pins it beside the broker and both clients pay
 * for the same hop.
 *
 *   node --import tsx bench/lib/mqtt-ws-bridge.ts <mqtt port>
 *
 * Prints `mqtt ws bridge listening on ws://127.0.0.1:<port>/mqtt`.
 */
import { connect } from "node:net";
import { createWebSocketStream, WebSocketServer } from "ws";

const mqttPort = Number(process.argv[2]);
if (!Number.isInteger(mqttPort) || mqttPort <= 0) throw new Error("usage: mqtt-ws-bridge.ts <mqtt port>");
const wss = new WebSocketServer({ host: "127.0.0.1", port: 0, handleProtocols: (p) => (p.has("mqtt") ? "mqtt" : false) });
wss.on("connection", (ws) => {
  const tcp = connect({ host: "127.0.0.1", port: mqttPort });
  tcp.setNoDelay(true);
  const stream = createWebSocketStream(ws);
  stream.pipe(tcp).pipe(stream);
  const end = () => (tcp.destroy(), ws.terminate());
  stream.once("error", end);
  tcp.once("error", end);
});
wss.once("listening", () => {
  const { port } = wss.address() as { port: number };
  console.log(`mqtt ws bridge listening on ws://127.0.0.1:${port}/mqtt`);
});
process.once("SIGTERM", () => process.exit(0));
