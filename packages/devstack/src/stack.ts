import path from "node:path";
import { repoRoot } from "./env";
import { startManagedProcess, type ManagedProcess } from "./managed-process";

export type AppName = "targets" | "hub" | "agent" | "web";

/** Starts one of Volley's apps as its own process, the way `npm start` and the end-to-end tests do. */
export function startApp(
  app: AppName,
  env: NodeJS.ProcessEnv,
  onLine?: (line: string, stream: "stdout" | "stderr") => void,
  detached = false,
): ManagedProcess {
  const cwd = path.join(repoRoot, "apps", app);
  if (app === "web") {
    const next = path.join(repoRoot, "node_modules", "next", "dist", "bin", "next");
    return startManagedProcess({
      name: app,
      command: process.execPath,
      args: [next, "start", "-p", String(env.WEB_PORT ?? 3000), "-H", String(env.WEB_HOST ?? "0.0.0.0")],
      cwd,
      env: { ...env, NODE_ENV: "production" },
      onLine,
      detached,
    });
  }
  // `node --import tsx` keeps one process per app, so signals reach the app itself.
  return startManagedProcess({
    name: app,
    command: process.execPath,
    args: ["--import", "tsx", path.join(cwd, "src", "main.ts")],
    cwd,
    env,
    onLine,
    detached,
  });
}
