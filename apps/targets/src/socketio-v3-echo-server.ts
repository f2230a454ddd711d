/// <reference path="./socketio-legacy-servers.d.ts" />
import { Server as IoServer, type Socket } from "socket.io-v3";
import type { EchoServer, EchoServerOptions } from "./echo-server";
import { socketioServerOptions, startSocketioEcho } from "./socketio-echo";

/** The Socket.IO v3 echo (see startSocketioEcho), for target.socketio.version 3. */
export function startSocketioV3EchoServer(options: EchoServerOptions = {}): Promise<EchoServer> {
  return startSocketioEcho<Socket>(
    {
      attach: (http) => new IoServer(http, socketioServerOptions()),
      onAnyEvent: (socket, cb) => socket.onAny((event: string, ...args: unknown[]) => cb(event, args)),
    },
    options,
  );
}
