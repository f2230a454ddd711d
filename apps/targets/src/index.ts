export { startWsEchoServer, ECHO_PATH, type WsEchoServer, type WsEchoServerOptions } from "./ws-echo-server";
