import type { Protocol } from "@volley/contracts";
import type { Driver } from "./driver";

/**
 * Each protocol's driver, loaded on first use: a driver brings its protocol client (socket.io-client
 * v2 and v4, sockjs-client, stompjs, mqtt.js, socketcluster-client, …), and an agent that runs ws
 * plans should not parse and hold all of them (start time and idle memory, issue 29).
 */
const LOADERS: Record<Protocol, () => Promise<Driver>> = {
  ws: async () => (await import("./ws-driver")).wsDriver,
  socketio: async () => (await import("./socketio-driver")).socketioDriver,
  sockjs: async () => (await import("./sockjs-driver")).sockjsDriver,
  sse: async () => (await import("./sse-driver")).sseDriver,
  "long-polling": async () => (await import("./polling-driver")).longPollingDriver,
  "short-polling": async () => (await import("./polling-driver")).shortPollingDriver,
  http: async () => (await import("./http-driver")).httpDriver,
  stomp: async () => (await import("./stomp-driver")).stompDriver,
  socketcluster: async () => (await import("./socketcluster-driver")).socketclusterDriver,
  mqtt: async () => (await import("./mqtt-driver")).mqttDriver,
};

const loaded = new Map<string, Promise<Driver>>();

/** Whether this agent has a driver for `protocol` (nothing is loaded). */
export function speaks(protocol: string): protocol is Protocol {
  return Object.hasOwn(LOADERS, protocol);
}

/** The driver for a plan's protocol, loaded once per process; undefined when this agent cannot speak it. */
export function driverFor(protocol: string): Promise<Driver> | undefined {
  if (!speaks(protocol)) return undefined;
  let driver = loaded.get(protocol);
  if (!driver) {
    driver = LOADERS[protocol]();
    loaded.set(protocol, driver);
  }
  return driver;
}
