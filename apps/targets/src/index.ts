export { startWsEchoServer, ECHO_PATH, type WsEchoServer, type WsEchoServerOptions } from "./ws-echo-server";
export { startSocketioEchoServer, SOCKETIO_PATH } from "./socketio-echo-server";
export { startSockjsEchoServer, SOCKJS_PREFIX } from "./sockjs-echo-server";
export type { EchoServer, EchoServerOptions } from "./echo-server";
export { startHttpTargetServer, HTTP_PATHS, type HttpTargetServer } from "./http-target-server";
export { RoomHub } from "./room-hub";
export { startStompEchoServer, STOMP_PATH, STOMP_ECHO_DESTINATION, STOMP_ROOM_PREFIX } from "./stomp-echo-server";
export { StompParser, serializeFrame, type StompFrame } from "./stomp-frame";
