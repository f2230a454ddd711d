import { fileURLToPath } from "node:url";
import type { HelloHttpStats } from "@volley/targets";
import { forkTarget } from "./target-process";

const CHILD = fileURLToPath(new URL("./hello-http-child.ts", import.meta.url));

export interface HelloHttpProcess {
  /** `http://127.0.0.1:<port>`; any path answers 200 `hello`, `?delay=<ms>` holds the answer that long. */
  url: string;
  /** The server's own counters (requests answered, connections accepted, most in flight). */
  stats(): Promise<HelloHttpStats>;
  stop(): void;
}

/** Test support: the hello-http target (apps/targets) in a child process (see hello-http-child.ts). */
export async function startHelloHttpProcess(): Promise<HelloHttpProcess> {
  const target = await forkTarget(CHILD, "hello-http process");
  return { url: target.url, stats: () => target.ask<HelloHttpStats>("stats", "stats"), stop: target.stop };
}
