import { fork } from "node:child_process";

export interface TargetProcess {
  url: string;
  /** Sends `question` and resolves with the `key` field of the child's next message. */
  ask<T>(question: string, key: string): Promise<T>;
  /** Disconnects the child, which closes its server and exits. */
  stop(): void;
}

/**
 * Test support: a reference target (apps/targets) in a process of its own, so a test of the agent's
 * event loop measures the agent's work alone, not the server's on the same loop. `childFile` runs
 * through tsx, sends `{ url }` once listening, answers questions over IPC and exits on disconnect.
 */
export async function forkTarget(childFile: string, name: string): Promise<TargetProcess> {
  const child = fork(childFile, [], { execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start in 20 s`)), 20_000);
    child.once("message", (m) => {
      clearTimeout(timer);
      resolve((m as { url: string }).url);
    });
    child.once("exit", (code) => reject(new Error(`${name} exited with ${code}`)));
  });
  return {
    url,
    ask: <T>(question: string, key: string) =>
      new Promise<T>((resolve) => {
        child.once("message", (m) => resolve((m as Record<string, T>)[key]!));
        child.send(question);
      }),
    stop: () => {
      if (child.connected) child.disconnect();
    },
  };
}
