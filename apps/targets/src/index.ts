export { startWsEchoServer, ECHO_PATH, WS_PATHS, WS_STATS_PATH, WS_BROADCAST_ROOM, type WsEchoServer, type WsEchoServerOptions } from "./ws-echo-server";
export { startSocketioEchoServer, SOCKETIO_PATH, SOCKETIO_JOIN_EVENT, SOCKETIO_PING_EVENT } from "./socketio-echo-server";
export { startSocketioV2EchoServer } from "./socketio-v2-echo-server";
export { startSocketioV3EchoServer } from "./socketio-v3-echo-server";
export { startSockjsEchoServer, SOCKJS_PREFIX, SOCKJS_BROADCAST_PREFIX } from "./sockjs-echo-server";
export { startSocketclusterEchoServer, SOCKETCLUSTER_PATH, SOCKETCLUSTER_ECHO_EVENT, SOCKETCLUSTER_PING_PROCEDURE } from "./socketcluster-echo-server";
export type { EchoServer, EchoServerOptions } from "./echo-server";
export { HOLD_MODES, type HoldMode } from "./echo-hold";
export type { HoldSummary } from "./hold-stats";
export { startHttpTargetServer, HTTP_PATHS, type HttpTargetServer } from "./http-target-server";
export { startHttpClusterServer, type HttpClusterServer, type HttpClusterServerOptions } from "./http-cluster-server";
export { RoomHub } from "./room-hub";
export { startMqttBroker, MQTT_PATH, type MqttBrokerStats } from "./mqtt-broker";
export { startStompEchoServer, STOMP_PATH, STOMP_SOCKJS_PREFIX, STOMP_ECHO_DESTINATION, STOMP_ROOM_PREFIX, type StompEchoServer } from "./stomp-echo-server";
export { StompParser, serializeFrame, type StompFrame } from "./stomp-frame";
export { STATS_PATH, type TestApp, type TestAppOptions } from "./apps/app-http";
export { startSocketioChat, SOCKETIO_CHAT_LOGIN_PATH, type SocketioChatStats, type ChatMessage } from "./apps/socketio-chat";
export { startJsonRpcWs, JSONRPC_PATH, JSONRPC_ERRORS, type JsonRpcStats } from "./apps/jsonrpc-ws";
export { startSockjsChat, SOCKJS_CHAT_PREFIX, type SockjsChatStats } from "./apps/sockjs-chat";
export {
  startStompSockjsChat,
  STOMP_CHAT_ENDPOINT,
  STOMP_CHAT_SEND,
  STOMP_CHAT_TOPIC,
  STOMP_CHAT_ERRORS,
  STOMP_CHAT_HISTORY,
  STOMP_CHAT_LOGIN,
  type StompChatOptions,
  type StompChatStats,
} from "./apps/stomp-sockjs-chat";
export { startGraphqlWsFeed, GRAPHQL_WS_PATH, GRAPHQL_WS_FEED_SDL, type GraphqlWsFeedStats, type FeedPost } from "./apps/graphql-ws-feed";
export {
  startSocketclusterPingpong,
  SOCKETCLUSTER_PINGPONG_PATH,
  SOCKETCLUSTER_PING_EVENT,
  SOCKETCLUSTER_PONG_EVENT,
  type SocketclusterPingpongStats,
} from "./apps/socketcluster-pingpong";
export { startSseNews, SSE_NEWS_PATHS, SSE_NEWS_EVENT, type SseNewsOptions, type SseNewsStats, type Headline } from "./apps/sse-news";
export { startFeedChat, FEED_CHAT_PATHS, FEED_CHAT_EVENT, type FeedChatOptions, type FeedChatStats, type FeedChatMessage } from "./apps/feed-chat";
export {
  startLongpollChat,
  LONGPOLL_CHAT_PATHS,
  LONGPOLL_DEFAULT_WAIT_MS,
  LONGPOLL_MAX_WAIT_MS,
  LONGPOLL_MAX_BATCH,
  type LongpollChatStats,
  type PollMessage,
} from "./apps/longpoll-chat";
export { startTodoApi, TODO_API_PATHS, type TodoApiStats, type Todo } from "./apps/todo-api";
export { startHelloHttp, HELLO_HTTP_BODY, type HelloHttpStats } from "./apps/hello-http";
export { startWsShop, WS_SHOP_PATHS, type WsShop, type WsShopStats } from "./apps/ws-shop";
export { startMsgpackWs, MSGPACK_WS_PATH, type MsgpackWsStats } from "./apps/msgpack-ws";
export { startProtobufWs, PROTOBUF_WS_PATH, TRADE_PROTO, type ProtobufWsStats } from "./apps/protobuf-ws";
export { startSocketioMsgpack, type SocketioMsgpackStats } from "./apps/socketio-msgpack";
export { startSocketioMsgpackGame, type SocketioMsgpackGameStats } from "./apps/socketio-msgpack-game";
