import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import { loadAgentIdentity } from "./agent-identity";

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(path.join(os.tmpdir(), "volley-agent-id-"));
  dirs.push(d);
  return path.join(d, "state");
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Another agent process holding an identity in `dir`: prints its key, then waits to be killed. */
function otherProcess(dir: string) {
  const script = `import { loadAgentIdentity } from ${JSON.stringify(path.join(import.meta.dirname, "agent-identity.ts"))};
    console.log(loadAgentIdentity(${JSON.stringify(dir)}).agentKey); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  const key = new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: child.stdout }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`exited ${code} before printing its key`)));
  });
  const gone = new Promise((resolve) => child.once("exit", resolve));
  return { child, key, kill: () => (child.kill("SIGKILL"), gone) };
}

describe("agent identity", () => {
  it("keeps one id across restarts of the agent, in a file of its state dir", () => {
    const dir = tmp();
    const first = loadAgentIdentity(dir);
    expect(first.agentKey).toMatch(/^agent-[0-9a-f-]{36}$/);
    expect(first.file).toBe(path.join(dir, "agent-id"));
    expect(JSON.parse(readFileSync(first.file, "utf8")).id).toBe(first.agentKey);
    first.release();
    const again = loadAgentIdentity(dir);
    expect(again.agentKey).toBe(first.agentKey);
    again.release();
  });

  it("gives a second running agent on the same state dir its own id, and a killed agent's id to its restart", async () => {
    const dir = tmp();
    const other = otherProcess(dir);
    const otherKey = await other.key;
    const mine = loadAgentIdentity(dir);
    expect(mine.agentKey).not.toBe(otherKey);
    expect(mine.file).toBe(path.join(dir, "agent-id-2"));

    // kill -9 leaves its lock behind; the process is gone, so its restart takes the id back.
    await other.kill();
    const restarted = otherProcess(dir);
    expect(await restarted.key).toBe(otherKey);
    await restarted.kill();
    mine.release();
  }, 30_000);
});
