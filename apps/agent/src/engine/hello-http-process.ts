import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { HelloHttpStats } from "@volley/targets";

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
  const child = fork(CHILD, [], { execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("hello-http process did not start in 20 s")), 20_000);
    child.once("message", (m) => {
      clearTimeout(timer);
      resolve((m as { url: string }).url);
    });
    child.once("exit", (code) => reject(new Error(`hello-http process exited with ${code}`)));
  });
  return {
    url,
    stats: () =>
      new Promise((resolve) => {
        child.once("message", (m) => resolve((m as { stats: HelloHttpStats }).stats));
        child.send("stats");
      }),
    stop: () => {
      if (child.connected) child.disconnect();
    },
  };
}
