import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { runSummarySchema } from "@volley/contracts";
import { startWsEchoServer } from "@volley/targets";
import { runAgentCli } from "../cli/cli-process";
import { packAgent } from "./agent-package";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const AGENT_DIR = fileURLToPath(new URL("../..", import.meta.url));

/**
 * What `npm install` of the tarball puts beside it, without the registry: each dependency its
 * package.json names, linked from where Node finds it for apps/agent (the versions it was packed with).
 */
function installDependencies(pkgDir: string): void {
  const { dependencies } = JSON.parse(readFileSync(path.join(pkgDir, "package.json"), "utf8")) as { dependencies: Record<string, string> };
  for (const name of Object.keys(dependencies)) {
    const from = [path.join(AGENT_DIR, "node_modules", name), path.join(AGENT_DIR, "..", "..", "node_modules", name)].find((d) => existsSync(d));
    if (!from) throw new Error(`${name} is not installed; run npm install`);
    const to = path.join(pkgDir, "node_modules", name);
    mkdirSync(path.dirname(to), { recursive: true });
    symlinkSync(from, to);
  }
}

describe("the packed agent's engine worker threads", () => {
  it("start from the one bundled file (no tsx) and run a plan split across them", async () => {
    const out = mkdtempSync(path.join(tmpdir(), "volley-agent-packed-workers-"));
    dirs.push(out);
    const { tarball } = await packAgent(out);
    await new Promise<void>((resolve, reject) => {
      const tar = spawn("tar", ["xzf", tarball, "-C", out]);
      tar.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`tar exited ${code}`))));
    });
    installDependencies(path.join(out, "package"));
    const server = await startWsEchoServer({ port: 0 });
    try {
      const plan = path.join(out, "plan.yaml");
      writeFileSync(
        plan,
        `name: packed\ntarget: { url: "${server.url}", connectTimeout: 5s }\nconnections: { count: 4, rate: 1000 }\nscenario: { kind: echo, message: { rate: 20, per: connection, arrival: constant, timeout: 5s }, duration: 1s }\n`,
      );
      const r = await runAgentCli(["run", plan, "--json", "--workers", "2"], {
        bin: path.join(out, "package", "bin", "volley-agent.js"),
        cwd: out,
        timeoutMs: 40_000,
      });
      expect(r.code, r.stderr).toBe(0);
      expect(runSummarySchema.parse(JSON.parse(r.stdout)).messages).toMatchObject({ sent: 80, received: 80, lost: 0 });
      expect(server.holdStats().count).toBe(80);
    } finally {
      await server.close();
    }
  }, 90_000);
});
