import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Run } from "@volley/contracts";
import { createAgentToken, createDb, DEFAULT_ORG_ID } from "@volley/db";
import { startApp, TARGETS_ON_FREE_PORTS, type ManagedProcess } from "@volley/devstack";
import { agentCommands } from "../../apps/web/src/lib/agent-commands";
import { createNetnsLab, netnsUnavailable, type NetnsLab } from "./netns";
import { ECHO_DELAY_MS, shardedEchoPlan } from "./sharded-run";
import { api, startStack, waitForFinal, type Stack } from "./stack-fixture";

/**
 * A second host that has nothing of Volley: a network namespace bridged to the stack (real web and
 * hub processes), where the Agents page's one-line install runs as printed. It fetches
 * install-agent.sh and the agent package from web (checksum checked), npm installs it, writes the
 * service's env file with the join token; the installed agent then enrolls and runs a shard.
 *
 * What stands in, and why: systemd (a test cannot own PID 1: a `systemctl` that records calls, and
 * the test starts the unit's ExecStart itself, with its EnvironmentFile), `sudo` (not installed
 * here; we are root already), and the npm registry inside the namespace (the host has no route out:
 * the package's third-party dependencies are fetched once from the real registry in the root
 * namespace and the namespace's npm reads them from that cache, offline).
 */
const TARGET_PORT = 19011;

const unavailable = await netnsUnavailable();
if (unavailable) console.warn(`netns-installer: skipped: ${unavailable}`);

function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.matchAll(/^([A-Z_][A-Z0-9_]*)="((?:[^"\\]|\\.)*)"$/gm)) out[m[1]!] = m[2]!.replace(/\\(.)/g, "$1");
  return out;
}

describe.skipIf(unavailable !== null)("the Agents page's one-line install on a bare second host", () => {
  let lab: NetnsLab | undefined;
  let stack: Stack | undefined;
  let target: ManagedProcess | undefined;
  let agent: ChildProcess | undefined;
  let work = "";
  const output: string[] = [];

  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), "volley-netns-install-"));
    lab = await createNetnsLab(1);
    const host = lab.hosts[0]!;
    target = startApp(
      "targets",
      { ...process.env, ...TARGETS_ON_FREE_PORTS, WS_ECHO_PORT: String(TARGET_PORT), LOG_LEVEL: "info" },
      (l) => output.push(`[targets] ${l}`),
      { prefix: host.exec },
    );
    await target.waitFor(/ws echo listening/, 60_000);
    stack = await startStack({ agents: 0, hubHost: lab.hubAddress });
  });

  afterAll(async () => {
    try {
      agent?.kill("SIGTERM");
      await stack?.stop();
      await target?.stop();
    } finally {
      await lab?.destroy();
      if (work) rmSync(work, { recursive: true, force: true });
    }
  });

  it("installs the agent from web's package, enrolls it with a join token, and runs a shard that passes", async () => {
    const host = lab!.hosts[0]!;
    const webPort = new URL(stack!.webUrl).port;
    const webOrigin = `http://${lab!.hubAddress}:${webPort}`;
    const h = createDb(stack!.databaseUrl, 1);
    const { secret } = await createAgentToken(h.db, { orgId: DEFAULT_ORG_ID, name: "netns host", pool: "default" }).finally(() => h.close());
    const line = agentCommands({ webOrigin, hubUrl: `http://${lab!.hubAddress}:${stack!.hubPort}`, secret }).script;

    // The root namespace fills an npm cache with the package's dependencies from the real registry.
    const cache = path.join(work, "npm-cache");
    const pkg = await fetch(`${stack!.webUrl}/agent/volley-agent.tgz`);
    expect(pkg.status).toBe(200);
    const tgz = path.join(work, "warm.tgz");
    writeFileSync(tgz, Buffer.from(await pkg.arrayBuffer()));
    const warm = spawnSync(
      "npm",
      ["install", "--global", "--prefix", path.join(work, "warm"), "--cache", cache, "--no-audit", "--no-fund", "--loglevel=error", tgz],
      { encoding: "utf8", timeout: 300_000 },
    );
    expect(warm.status, warm.stderr).toBe(0);

    // The host: a throwaway root with systemd's runtime dir, stand-ins for systemctl and sudo.
    const root = path.join(work, "root");
    const bin = path.join(work, "bin");
    mkdirSync(path.join(root, "etc"), { recursive: true });
    mkdirSync(path.join(root, "run", "systemd", "system"), { recursive: true });
    mkdirSync(bin);
    writeFileSync(path.join(root, "etc", "passwd"), "root:x:0:0:root:/root:/bin/bash\n");
    writeFileSync(path.join(root, "etc", "group"), "root:x:0:\n");
    writeFileSync(path.join(root, "etc", "shadow"), "root:*:19000:0:99999:7:::\n", { mode: 0o600 });
    writeFileSync(path.join(root, "etc", "gshadow"), "root:*::\n", { mode: 0o600 });
    writeFileSync(path.join(bin, "systemctl"), `#!/bin/sh\necho "$*" >> "${work}/systemctl.log"\ncase "$1" in is-enabled|is-active) exit 1 ;; esac\nexit 0\n`);
    writeFileSync(path.join(bin, "sudo"), '#!/bin/sh\nexec "$@"\n');
    chmodSync(path.join(bin, "systemctl"), 0o755);
    chmodSync(path.join(bin, "sudo"), 0o755);

    const install = spawnSync(host.exec[0]!, [...host.exec.slice(1), "bash", "-o", "pipefail", "-c", line], {
      env: {
        PATH: `${bin}:${process.env.PATH}`,
        HOME: work,
        VOLLEY_INSTALL_ROOT: root,
        npm_config_cache: cache,
        npm_config_offline: "true",
      },
      encoding: "utf8",
      timeout: 300_000,
    });
    const installOut = `${install.stdout}${install.stderr}`;
    expect(install.status, installOut).toBe(0);
    expect(installOut).toContain(`installed ${webOrigin}/agent/volley-agent.tgz`);
    expect(installOut).not.toContain(secret);
    expect(readFileSync(path.join(work, "systemctl.log"), "utf8")).toContain("restart volley-agent.service");

    // What systemd would start: the unit's ExecStart, with its EnvironmentFile, on that host.
    const unit = readFileSync(path.join(root, "etc", "systemd", "system", "volley-agent.service"), "utf8");
    const exec = /\nExecStart=(\S+) (\/opt\/volley-agent\/bin\/volley-agent) daemon\n/.exec(unit);
    expect(exec, unit).not.toBeNull();
    const env = parseEnvFile(readFileSync(path.join(root, "etc", "volley", "agent.env"), "utf8"));
    expect(env.AGENT_TOKEN).toBe(secret);
    agent = spawn(host.exec[0]!, [...host.exec.slice(1), exec![1]!, `${root}${exec![2]!}`, "daemon"], {
      // HOME: where the agent keeps its identity by default; the service's own, not this machine's root.
      env: { PATH: process.env.PATH, HOME: work, NODE_ENV: "production", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const agentOut: string[] = [];
    const connected = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the installed agent did not connect in 60 s:\n${agentOut.join("\n")}`)), 60_000);
      const onLine = (d: Buffer) => {
        agentOut.push(d.toString());
        if (/connected to/.test(d.toString())) {
          clearTimeout(timer);
          resolve();
        }
      };
      agent!.stdout!.on("data", onLine);
      agent!.stderr!.on("data", (d: Buffer) => agentOut.push(d.toString()));
      agent!.once("exit", (code) => reject(new Error(`the installed agent exited with ${code}:\n${agentOut.join("\n")}`)));
    });
    await connected;

    const plan = shardedEchoPlan("installed agent on a netns host", `ws://127.0.0.1:${TARGET_PORT}/echo?delay=${ECHO_DELAY_MS}`, 1);
    const created = await api<{ id: string }>(stack!, "POST", "/api/v1/runs", { plan });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const run = await waitForFinal<Run>(stack!, created.body.id, 120_000);
    expect(run.status, `${run.reason}\n${[...stack!.output, ...output, ...agentOut].slice(-40).join("\n")}`).toBe("passed");
    expect(run.summary!.messages.sent).toBeGreaterThan(0);
    expect(run.summary!.messages.received).toBe(run.summary!.messages.sent);
    // The hub saw the installed agent connect from the host's own address (no other agent runs).
    const hello = stack!.output.find((l) => l.includes('"agent connected"') && l.includes(`${host.address}"`));
    expect(hello, stack!.output.filter((l) => l.includes("agent connected")).join("\n")).toBeDefined();
    expect(existsSync(path.join(root, "opt", "volley-agent", "lib", "node_modules", "@volley", "agent", "bin", "volley-agent.js"))).toBe(true);
  });
});
