import cluster, { type Worker } from "node:cluster";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { HoldMode } from "./echo-hold";
import type { EchoServerOptions } from "./echo-server";
import { hostPort } from "./listen-http";

/** What the primary hands each worker (http-cluster-worker.ts). */
export interface ClusterWorkerOptions {
  host: string;
  port: number;
  delayMs: number;
  hold: HoldMode;
}
export type ClusterWorkerMessage = { type: "listening"; port: number } | { type: "failed"; error: string };
export type ClusterPrimaryMessage = { type: "stall"; ms: number } | { type: "close" };

export interface HttpClusterServerOptions extends EchoServerOptions {
  /** Worker processes sharing the port (node:cluster, round-robin on Linux). */
  workers: number;
}

export interface HttpClusterServer {
  port: number;
  /** `http://host:port`; the routes are the single-process server's (HTTP_PATHS). */
  url: string;
  workers: number;
  /** Holds replies in every worker (see EchoServer.stall). */
  stall(ms: number): void;
  /** Stops every worker. */
  close(): Promise<void>;
}

const WORKER_FILE = fileURLToPath(new URL("./http-cluster-worker.ts", import.meta.url));
// Workers run the TypeScript source as the targets app does; the loader resolved here, not from
// the primary's cwd or its execArgv (vitest's or tsx's own flags would not fit a worker).
const TSX_LOADER = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const STOP_MS = 5000;

/** A free port on `host`: workers that all listen on port 0 would share one handle with every other port-0 cluster server in this process. */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, host, () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

function waitListening(worker: Worker): Promise<number> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number) => reject(new Error(`HTTP cluster worker exited (${code}) before it listened`));
    worker.once("exit", onExit);
    worker.on("message", (m: ClusterWorkerMessage) => {
      if (m.type === "listening") {
        worker.off("exit", onExit);
        resolve(m.port);
      } else if (m.type === "failed") reject(new Error(m.error));
    });
  });
}

function stop(worker: Worker): Promise<void> {
  if (worker.isDead()) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => worker.kill("SIGKILL"), STOP_MS);
    worker.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    if (worker.isConnected()) worker.send({ type: "close" } satisfies ClusterPrimaryMessage);
    else worker.kill();
  });
}

/**
 * The HTTP reference server (http-target-server.ts) run by `workers` node:cluster processes on
 * one port, beside the single-process one: the Node cluster comparison of the http-rps template.
 * Sessions (SSE, polling) live in the worker that opened them, so only `/echo` is meaningful here
 * (a session's next request may reach another worker, as on any cluster without sticky sessions).
 */
export async function startHttpClusterServer(options: HttpClusterServerOptions): Promise<HttpClusterServer> {
  const { host = "127.0.0.1", delayMs = 0, hold = "timer", workers: count } = options;
  if (!cluster.isPrimary) throw new Error("startHttpClusterServer runs in the primary process only");
  if (!Number.isInteger(count) || count < 1) throw new Error(`workers must be a whole number of at least 1 (got ${count})`);
  const port = options.port || (await freePort(host));
  const workerOptions: ClusterWorkerOptions = { host, port, delayMs, hold };
  cluster.setupPrimary({ exec: WORKER_FILE, execArgv: ["--import", TSX_LOADER], args: [JSON.stringify(workerOptions)] });
  const workers = Array.from({ length: count }, () => cluster.fork());
  try {
    await Promise.all(workers.map(waitListening));
  } catch (err) {
    await Promise.all(workers.map(stop));
    throw err;
  }
  return {
    port,
    url: `http://${hostPort(host, port)}`,
    workers: count,
    stall(ms: number) {
      for (const w of workers) if (w.isConnected()) w.send({ type: "stall", ms } satisfies ClusterPrimaryMessage);
    },
    async close() {
      await Promise.all(workers.map(stop));
    },
  };
}
