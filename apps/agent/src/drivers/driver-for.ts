import type { Protocol } from "@volley/contracts";
import type { Driver } from "./driver";
import { socketioDriver } from "./socketio-driver";
import { sockjsDriver } from "./sockjs-driver";
import { wsDriver } from "./ws-driver";

const DRIVERS: Record<Protocol, Driver> = { ws: wsDriver, socketio: socketioDriver, sockjs: sockjsDriver };

/** The driver for a plan's protocol, or undefined when this agent cannot speak it. */
export function driverFor(protocol: string): Driver | undefined {
  return Object.hasOwn(DRIVERS, protocol) ? DRIVERS[protocol as Protocol] : undefined;
}
