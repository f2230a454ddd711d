export { startWsEchoServer, ECHO_PATH, type WsEchoServer, type WsEchoServerOptions } from "./ws-echo-server";
export { startSocketioEchoServer, SOCKETIO_PATH } from "./socketio-echo-server";
export { startSockjsEchoServer, SOCKJS_PREFIX } from "./sockjs-echo-server";
export type { EchoServer, EchoServerOptions } from "./echo-server";
