import { pino } from "pino";
import { loadEnv } from "./env";
import { startWsEchoServer } from "./ws-echo-server";

const env = loadEnv();
const log = pino({ name: "targets", level: env.LOG_LEVEL });

const echo = await startWsEchoServer({ host: env.TARGETS_HOST, port: env.WS_ECHO_PORT }).catch((err: NodeJS.ErrnoException) => {
  const hint = err.code === "EADDRINUSE" ? ` (port in use: set WS_ECHO_PORT to a free port)` : "";
  log.fatal(`ws echo could not listen on ${env.TARGETS_HOST}:${env.WS_ECHO_PORT}: ${err.message}${hint}`);
  process.exit(1);
});
log.info(`ws echo listening on ${echo.url}`);

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info(`${signal} received, closing targets`);
  await echo.close();
  process.exit(0);
}
process.on("SIGINT", () => void shutdown("SIGINT"));
process.on("SIGTERM", () => void shutdown("SIGTERM"));
