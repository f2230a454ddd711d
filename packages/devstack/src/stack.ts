import path from "node:path";
import { repoRoot } from "./env";
import { startManagedProcess, type ManagedProcess } from "./managed-process";

export type AppName = "targets" | "hub" | "agent" | "web";

export interface StartAppOptions {
  /** Own process group (see ManagedProcessOptions.detached). */
  detached?: boolean;
  /**
   * A command that runs node in its place, e.g. `["ip", "netns", "exec", "<ns>"]` to start the app
   * inside a network namespace. It must exec node (not fork it), so signals reach the app.
   */
  prefix?: string[];
}

/** Starts one of Volley's apps as its own process, the way `npm start` and the end-to-end tests do. */
export function startApp(
  app: AppName,
  env: NodeJS.ProcessEnv,
  onLine?: (line: string, stream: "stdout" | "stderr") => void,
  { detached = false, prefix = [] }: StartAppOptions = {},
): ManagedProcess {
  const cwd = path.join(repoRoot, "apps", app);
  const [command, ...prefixArgs] = [...prefix, process.execPath];
  if (app === "web") {
    // The custom server: Next's handler plus the Socket.IO live feed on one port (apps/web/server.ts).
    return startManagedProcess({
      name: app,
      command: command!,
      args: [...prefixArgs, "--import", "tsx", path.join(cwd, "server.ts")],
      cwd,
      env: { ...env, NODE_ENV: "production", WEB_PORT: String(env.WEB_PORT ?? 3000), WEB_HOST: String(env.WEB_HOST ?? "0.0.0.0") },
      onLine,
      detached,
    });
  }
  // `node --import tsx` keeps one process per app, so signals reach the app itself.
  return startManagedProcess({
    name: app,
    command: command!,
    args: [...prefixArgs, "--import", "tsx", path.join(cwd, "src", "main.ts")],
    cwd,
    env,
    onLine,
    detached,
  });
}

/**
 * The targets app with every server on a free port and no cluster workers: what tests and benches
 * start, since fixed ports collide with a running stack, a parallel suite or the previous test's
 * process still shutting down.
 */
export const TARGETS_ON_FREE_PORTS = {
  WS_ECHO_PORT: "0",
  SOCKETIO_ECHO_PORT: "0",
  SOCKJS_ECHO_PORT: "0",
  STOMP_ECHO_PORT: "0",
  HTTP_ECHO_PORT: "0",
  SOCKETCLUSTER_ECHO_PORT: "0",
  HTTP_CLUSTER_PORT: "0",
  HTTP_CLUSTER_WORKERS: "0",
  MQTT_BROKER_PORT: "0",
} as const;
