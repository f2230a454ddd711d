import { pino } from "pino";
import { loadEnv } from "./env";
import type { EchoServer, EchoServerOptions } from "./echo-server";
import { startSocketclusterEchoServer } from "./socketcluster-echo-server";
import { startSocketioEchoServer } from "./socketio-echo-server";
import { startSockjsEchoServer } from "./sockjs-echo-server";
import { startWsEchoServer } from "./ws-echo-server";

const env = loadEnv();
const log = pino({ name: "targets", level: env.LOG_LEVEL });

/** Starts one target or stops the process with a line naming the port variable to change. */
async function start(
  label: string,
  portVar: "WS_ECHO_PORT" | "SOCKETIO_ECHO_PORT" | "SOCKJS_ECHO_PORT" | "SOCKETCLUSTER_ECHO_PORT",
  startServer: (o: EchoServerOptions) => Promise<EchoServer>,
): Promise<EchoServer> {
  const server = await startServer({ host: env.TARGETS_HOST, port: env[portVar] }).catch((err: NodeJS.ErrnoException) => {
    const hint = err.code === "EADDRINUSE" ? ` (port in use: set ${portVar} to a free port)` : "";
    log.fatal(`${label} could not listen on ${env.TARGETS_HOST}:${env[portVar]}: ${err.message}${hint}`);
    process.exit(1);
  });
  log.info(`${label} listening on ${server.url}`);
  return server;
}

const servers = [
  await start("ws echo", "WS_ECHO_PORT", startWsEchoServer),
  await start("socket.io echo", "SOCKETIO_ECHO_PORT", startSocketioEchoServer),
  await start("sockjs echo", "SOCKJS_ECHO_PORT", startSockjsEchoServer),
  await start("socketcluster echo", "SOCKETCLUSTER_ECHO_PORT", startSocketclusterEchoServer),
];

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info(`${signal} received, closing targets`);
  await Promise.all(servers.map((s) => s.close()));
  process.exit(0);
}
process.on("SIGINT", () => void shutdown("SIGINT"));
process.on("SIGTERM", () => void shutdown("SIGTERM"));
