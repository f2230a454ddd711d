/**
 * Entry point. No arguments (or `daemon`) keeps the hub daemon exactly as before — npm start and the
 * e2e tests start it that way; `check` tries the hub once (the installer's preflight); anything else is the standalone CLI (`run plan.yaml`, `--help`).
 * Each mode is imported lazily so the CLI never reads the hub's environment and vice versa; an
 * engine worker thread of the packed agent (one bundled file) starts here as well.
 */
import { isMainThread, workerData } from "node:worker_threads";
import { agentEntry, ENGINE_WORKER } from "./workers/worker-messages";

agentEntry.url = import.meta.url;
const args = process.argv.slice(2);
if (!isMainThread && (workerData as Record<string, unknown> | null)?.[ENGINE_WORKER]) {
  // The packed agent is one bundled file, and its engine worker threads start from it too.
  const { serveEngineWorker } = await import("./workers/engine-worker");
  serveEngineWorker();
} else if (args.length === 0 || (args.length === 1 && args[0] === "daemon")) {
  await import("./daemon");
} else if (args.length === 1 && args[0] === "check") {
  const { runCheck } = await import("./check");
  const code = await runCheck();
  process.stdout.write("", () => process.exit(code));
} else {
  const { runCli } = await import("./cli/main");
  const code = await runCli(args);
  // Exit explicitly: a target that never answers our close frame must not keep the CLI alive.
  process.stdout.write("", () => process.exit(code));
}
