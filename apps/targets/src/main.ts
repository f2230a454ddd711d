import { pino } from "pino";
import { loadEnv } from "./env";
import type { EchoServer, EchoServerOptions } from "./echo-server";
import { startGraphqlWsFeed } from "./apps/graphql-ws-feed";
import { startJsonRpcWs } from "./apps/jsonrpc-ws";
import { startLongpollChat } from "./apps/longpoll-chat";
import { startSocketclusterPingpong } from "./apps/socketcluster-pingpong";
import { startSocketioChat } from "./apps/socketio-chat";
import { startSseNews } from "./apps/sse-news";
import { startStompSockjsChat } from "./apps/stomp-sockjs-chat";
import { startHttpClusterServer } from "./http-cluster-server";
import { startHttpTargetServer } from "./http-target-server";
import { startMqttBroker } from "./mqtt-broker";
import { startSocketclusterEchoServer } from "./socketcluster-echo-server";
import { startSocketioEchoServer } from "./socketio-echo-server";
import { startSockjsEchoServer } from "./sockjs-echo-server";
import { startStompEchoServer } from "./stomp-echo-server";
import { startWsEchoServer } from "./ws-echo-server";

const env = loadEnv();
const log = pino({ name: "targets", level: env.LOG_LEVEL });

/** Targets that hold echoes: their applied holds are logged at shutdown (the ground truth of a latency run). */
const holding: { label: string; server: EchoServer }[] = [];

type PortVar =
  | "WS_ECHO_PORT"
  | "SOCKETIO_ECHO_PORT"
  | "SOCKJS_ECHO_PORT"
  | "STOMP_ECHO_PORT"
  | "HTTP_ECHO_PORT"
  | "SOCKETCLUSTER_ECHO_PORT"
  | "HTTP_CLUSTER_PORT"
  | "MQTT_BROKER_PORT"
  | "SOCKETIO_CHAT_PORT"
  | "JSONRPC_WS_PORT"
  | "GRAPHQL_WS_PORT"
  | "SOCKETCLUSTER_PINGPONG_PORT"
  | "SSE_NEWS_PORT"
  | "LONGPOLL_CHAT_PORT"
  | "STOMP_CHAT_PORT";

/** Starts one target or stops the process with a line naming the port variable to change. */
async function start<T extends { url: string; close(): Promise<void> }>(
  label: string,
  portVar: PortVar,
  startServer: (o: EchoServerOptions) => Promise<T>,
): Promise<T> {
  const server = await startServer({ host: env.TARGETS_HOST, port: env[portVar], hold: env.ECHO_HOLD }).catch((err: NodeJS.ErrnoException) => {
    const hint = err.code === "EADDRINUSE" || /EADDRINUSE/.test(err.message) ? ` (port in use: set ${portVar} to a free port)` : "";
    log.fatal(`${label} could not listen on ${env.TARGETS_HOST}:${env[portVar]}: ${err.message}${hint}`);
    process.exit(1);
  });
  log.info(`${label} listening on ${server.url}`);
  if ("holdStats" in server) holding.push({ label, server: server as unknown as EchoServer });
  return server;
}

const servers: { close(): Promise<void> }[] = [
  await start("ws echo", "WS_ECHO_PORT", startWsEchoServer),
  await start("socket.io echo", "SOCKETIO_ECHO_PORT", startSocketioEchoServer),
  await start("sockjs echo", "SOCKJS_ECHO_PORT", startSockjsEchoServer),
  await start("stomp echo", "STOMP_ECHO_PORT", startStompEchoServer),
  await start("http echo", "HTTP_ECHO_PORT", startHttpTargetServer),
  await start("socketcluster echo", "SOCKETCLUSTER_ECHO_PORT", startSocketclusterEchoServer),
  await start("mqtt broker (aedes, MQTT 3.1.1 over WebSocket; counters at /stats)", "MQTT_BROKER_PORT", startMqttBroker),
];
if (env.HTTP_CLUSTER_WORKERS > 0) {
  const workers = env.HTTP_CLUSTER_WORKERS;
  servers.push(await start(`http echo (node:cluster, ${workers} workers)`, "HTTP_CLUSTER_PORT", (o) => startHttpClusterServer({ ...o, workers })));
}
if (env.TARGETS_TEST_APPS) {
  servers.push(
    await start("socket.io chat app (POST /login, auth token, join, chat)", "SOCKETIO_CHAT_PORT", startSocketioChat),
    await start("json-rpc ws app", "JSONRPC_WS_PORT", startJsonRpcWs),
    await start("graphql-ws feed app", "GRAPHQL_WS_PORT", startGraphqlWsFeed),
    await start("socketcluster ping/pong app", "SOCKETCLUSTER_PINGPONG_PORT", startSocketclusterPingpong),
    await start("sse news app (GET /news/stream, POST /news/publish)", "SSE_NEWS_PORT", startSseNews),
    await start("long-polling chat app (/chat/session, /chat/send, /chat/poll)", "LONGPOLL_CHAT_PORT", startLongpollChat),
    await start("spring-like STOMP-over-SockJS chat app (/ws, SEND /app/chat.send, SUBSCRIBE /topic/public)", "STOMP_CHAT_PORT", startStompSockjsChat),
  );
}

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info(`${signal} received, closing targets`);
  for (const { label, server } of holding) {
    const h = server.holdStats();
    if (h.count > 0)
      log.info({ hold: h }, `${label} holds applied (${env.ECHO_HOLD}): ${h.count} replies, p50 ${h.p50Ms} ms, p99 ${h.p99Ms} ms, max ${h.maxMs} ms`);
  }
  await Promise.all(servers.map((s) => s.close()));
  process.exit(0);
}
process.on("SIGINT", () => void shutdown("SIGINT"));
process.on("SIGTERM", () => void shutdown("SIGTERM"));
