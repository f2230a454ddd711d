import { Server as IoServer, type Socket } from "socket.io";
import type { EchoServer, EchoServerOptions } from "./echo-server";
import { socketioServerOptions, startSocketioEcho } from "./socketio-echo";

export { SOCKETIO_PATH, SOCKETIO_JOIN_EVENT, SOCKETIO_PING_EVENT } from "./socketio-echo";

/** The Socket.IO v4 echo (see startSocketioEcho): the server the socketio driver meets by default. */
export function startSocketioEchoServer(options: EchoServerOptions = {}): Promise<EchoServer> {
  return startSocketioEcho<Socket>(
    {
      attach: (http) => new IoServer(http, socketioServerOptions()),
      onAnyEvent: (socket, cb) => socket.onAny((event: string, ...args: unknown[]) => cb(event, args)),
    },
    options,
  );
}
