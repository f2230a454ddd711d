/// <reference path="./socketio-legacy-servers.d.ts" />
import createIoServer, { type Socket } from "socket.io-v2";
import type { EchoServer, EchoServerOptions } from "./echo-server";
import { socketioServerOptions, startSocketioEcho } from "./socketio-echo";

/** The Socket.IO v2 echo (see startSocketioEcho), for target.socketio.version 2 (Engine.IO 3). */
export function startSocketioV2EchoServer(options: EchoServerOptions = {}): Promise<EchoServer> {
  return startSocketioEcho<Socket>(
    {
      attach: (http) => createIoServer(http, socketioServerOptions()),
      // v2 has no onAny; a packet middleware sees every event, in order. It never calls next: no
      // listener waits for the events, so dispatching them would only cost time.
      onAnyEvent: (socket, cb) => socket.use((packet) => cb(String(packet[0]), packet.slice(1))),
    },
    options,
  );
}
