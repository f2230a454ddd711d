import type { Protocol } from "@volley/contracts";
import type { Driver } from "./driver";
import { httpDriver } from "./http-driver";
import { mqttDriver } from "./mqtt-driver";
import { longPollingDriver, shortPollingDriver } from "./polling-driver";
import { socketclusterDriver } from "./socketcluster-driver";
import { socketioDriver } from "./socketio-driver";
import { sockjsDriver } from "./sockjs-driver";
import { sseDriver } from "./sse-driver";
import { stompDriver } from "./stomp-driver";
import { wsDriver } from "./ws-driver";

const DRIVERS: Partial<Record<Protocol, Driver>> = {
  ws: wsDriver,
  socketio: socketioDriver,
  sockjs: sockjsDriver,
  sse: sseDriver,
  "long-polling": longPollingDriver,
  "short-polling": shortPollingDriver,
  http: httpDriver,
  stomp: stompDriver,
  socketcluster: socketclusterDriver,
  mqtt: mqttDriver,
};

/** The driver for a plan's protocol, or undefined when this agent cannot speak it. */
export function driverFor(protocol: string): Driver | undefined {
  return Object.hasOwn(DRIVERS, protocol) ? DRIVERS[protocol as Protocol] : undefined;
}
