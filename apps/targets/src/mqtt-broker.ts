import { Aedes, type AedesPublishPacket, type Client } from "aedes";
import { createWebSocketStream } from "ws";
import type { TestApp, TestAppOptions } from "./apps/app-http";
import { startWsApp } from "./apps/ws-app";

/** Where the broker speaks MQTT over WebSocket (the path mosquitto, EMQX and HiveMQ examples use). */
export const MQTT_PATH = "/mqtt";

/** The broker's own counters (GET /stats); the broker's `$SYS` topics are its own, so these leave them out. */
export interface MqttBrokerStats {
  /** Clients whose CONNECT was accepted (CONNACK sent), since the start. */
  connections: number;
  /** Clients connected now. */
  connected: number;
  /** Topic filters granted in SUBSCRIBEs. */
  subscriptions: number;
  /** PUBLISH packets received from clients. */
  published: number;
  /** Copies of those the broker handed to subscribers: its fan-out (a room of n members: n per publish, the sender's own copy included). */
  forwarded: number;
  /**
   * Of `forwarded`, those handed to a client before the broker acknowledged its first SUBSCRIBE:
   * MQTT lets a broker start delivering before the SUBACK (3.1.1 §3.8.4), so a client that only
   * listens once subscribed may never see these.
   */
  forwardedBeforeSuback: number;
}

const isSys = (topic: string) => topic.startsWith("$SYS");

/**
 * A real MQTT 3.1.1 broker (aedes, in memory) over WebSocket at ws://host:port/mqtt, so Volley's
 * mqtt protocol has a target `npm start` runs: any topic, publish and subscribe (echo: subscribe
 * to a topic and publish there; a room: every member on the room's topic). Its counters, kept by
 * the broker's own hooks and events, at GET /stats on the same port.
 */
export async function startMqttBroker(options: TestAppOptions = {}): Promise<TestApp<MqttBrokerStats>> {
  const counters = { connections: 0, subscriptions: 0, published: 0, forwarded: 0, forwardedBeforeSuback: 0 };
  /** Clients whose SUBSCRIBE was acknowledged: aedes emits "subscribe" as it writes the SUBACK. */
  const subacked = new WeakSet<Client>();
  const broker = await Aedes.createBroker({
    // Called once per subscriber a message goes to, just before it is written: the fan-out's own count.
    authorizeForward: (client: Client, packet: AedesPublishPacket) => {
      if (isSys(packet.topic)) return packet;
      counters.forwarded++;
      if (!subacked.has(client)) counters.forwardedBeforeSuback++;
      return packet;
    },
  });
  broker.on("clientReady", () => counters.connections++);
  broker.on("subscribe", (subs, client) => {
    counters.subscriptions += subs.length;
    subacked.add(client);
  });
  broker.on("publish", (packet, client) => {
    if (client && !isSys(packet.topic)) counters.published++;
  });
  const stats = (): MqttBrokerStats => ({ ...counters, connected: broker.connectedClients });
  const app = await startWsApp(options, { path: MQTT_PATH, stats }, (ws) => {
    broker.handle(createWebSocketStream(ws));
  });
  return {
    ...app,
    async close() {
      await app.close();
      await new Promise<void>((resolve) => broker.close(() => resolve()));
    },
  };
}
