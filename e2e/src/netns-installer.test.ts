import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Run } from "@volley/contracts";
import { createDb, listShards } from "@volley/db";
import { freePort, startApp, TARGETS_ON_FREE_PORTS, type ManagedProcess } from "@volley/devstack";
import { createNetnsLab, netnsUnavailable, type NetnsLab } from "./netns";
import { ECHO_DELAY_MS, shardedEchoPlan } from "./sharded-run";
import { api, startStack, waitForFinal, type Stack } from "./stack-fixture";
import { chromiumInstalled, launchChromiumIn, openPage, screenshot, signUp } from "./support/browser";

/**
 * A new user with two machines, on a default stack (web on every interface, the hub on loopback):
 * the main host runs web, hub, one agent and a target; the second host is a network namespace with
 * an address and a host name of its own and nothing of Volley. In Chromium on the second host the
 * user signs up at the main host's address, opens Agents → Add agent and copies the line the page
 * prints; that line, run as printed on the second host, installs the agent (no systemd there: it
 * prints the foreground command, which is run as printed). The agent shows Online under its host
 * name, a plan over both hosts passes with counts equal to both targets' own, and sign-in works.
 *
 * What stands in, and why: the npm registry inside the namespace (it has no route out: the
 * package's dependencies are fetched once from the real registry in the root namespace and the
 * namespace's npm reads that cache, offline), and the throwaway root the installer writes into
 * (VOLLEY_INSTALL_ROOT) instead of this machine's /opt and /etc.
 */
const SECOND_HOST = "volley-second-host";

const unavailable = (await netnsUnavailable()) ?? (chromiumInstalled("netns-installer") ? null : "Chromium is missing");
if (unavailable) console.warn(`netns-installer: skipped: ${unavailable}`);

interface EchoStats {
  hold: { count: number };
}

describe.skipIf(unavailable !== null)("a second host joins by pasting the Agents page's line", () => {
  let lab: NetnsLab | undefined;
  let stack: Stack | undefined;
  const targets: ManagedProcess[] = [];
  let agent: ChildProcess | undefined;
  let browser: Browser | undefined;
  let page: Page;
  let work = "";
  let targetPort = 0;
  const output: string[] = [];
  const agentOut: string[] = [];
  /** Runs argv on the second host: its namespace, and a UTS namespace with its own host name. */
  let onSecondHost: (argv: string[]) => string[];

  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), "volley-netns-install-"));
    lab = await createNetnsLab(1);
    const host = lab.hosts[0]!;
    onSecondHost = (argv) => [...host.exec, "unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', SECOND_HOST, ...argv];
    // One target per host on the same port: each agent loads its own host's 127.0.0.1.
    targetPort = await freePort();
    for (const [i, prefix] of [undefined, host.exec].entries()) {
      const env = { ...process.env, ...TARGETS_ON_FREE_PORTS, WS_ECHO_PORT: String(targetPort), LOG_LEVEL: "info" };
      targets.push(startApp("targets", env, (l) => output.push(`[targets-${i + 1}] ${l}`), { prefix }));
    }
    await Promise.all(targets.map((t) => t.waitFor(/ws echo listening/, 60_000)));
    stack = await startStack({ agents: 1 });
    browser = await launchChromiumIn(host.exec, work);
    page = await openPage(browser, { width: 1280, height: 900 });
  });

  afterAll(async () => {
    try {
      await browser?.close();
      agent?.kill("SIGTERM");
      await stack?.stop();
      await Promise.all(targets.map((t) => t.stop()));
    } finally {
      await lab?.destroy();
      if (work) rmSync(work, { recursive: true, force: true });
    }
  });

  it("signs up in Chromium at the main host's address, installs the agent with the page's line, runs a plan over both hosts, signs in again", async () => {
    const host = lab!.hosts[0]!;
    const webPort = new URL(stack!.webUrl).port;
    const webOrigin = `http://${lab!.hubAddress}:${webPort}`;

    // Sign-up from another host over plain http: the session cookie must come back (not __Secure-).
    await page.goto(`${webOrigin}/sign-up`);
    await expect.poll(() => page.getByTestId("plain-http-notice").count()).toBe(1);
    await signUp(page, { name: "Second Host Admin", email: "admin@second.example" });
    await page.waitForURL(`${webOrigin}/`);
    const cookies = await page.context().cookies();
    expect(cookies.map((c) => c.name)).toContain("better-auth.session_token");
    expect(cookies.find((c) => c.name.endsWith("session_token"))?.secure).toBe(false);

    // Agents → Add agent: the line names the address this page was opened at, never localhost.
    await page.goto(`${webOrigin}/agents`);
    await page.getByLabel("Token name").fill("second host");
    await page.getByRole("button", { name: "Create join token" }).click();
    const line = (await page.getByTestId("agent-command-script").textContent())!.trim();
    await screenshot(page, "netns-add-agent");
    expect(line).toMatch(
      new RegExp(
        `^curl -fsSL ${webOrigin}/install-agent\\.sh \\| bash -s -- --token vat_\\S+ --hub ${webOrigin}/hub --package-url ${webOrigin}/agent/volley-agent\\.tgz$`,
      ),
    );
    expect(line).not.toMatch(/localhost|127\.0\.0\.1|sudo/);
    expect(await page.getByTestId("agent-loopback-warning").count()).toBe(0);
    const secret = /--token (\S+)/.exec(line)![1]!;

    // The second host's npm reads the package's dependencies from a cache filled here, offline.
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
    const root = path.join(work, "root");
    mkdirSync(path.join(root, "etc"), { recursive: true });
    const hostEnv = { PATH: process.env.PATH, HOME: work, VOLLEY_INSTALL_ROOT: root, npm_config_cache: cache, npm_config_offline: "true" };
    const onHost = (command: string) => {
      const [bin, ...args] = onSecondHost(["bash", "-o", "pipefail", "-c", command]);
      const res = spawnSync(bin!, args, { env: hostEnv, encoding: "utf8", timeout: 300_000 });
      return { code: res.status, out: `${res.stdout}${res.stderr}` };
    };

    // A token the hub does not know: said in words, non-zero, nothing installed.
    const wrong = onHost(line.replace(secret, `${secret.slice(0, -4)}XXXX`));
    expect(wrong.code, wrong.out).toBe(1);
    expect(wrong.out).toMatch(/the hub refused this agent: invalid agent token: this hub knows no such token .* — nothing was installed or changed/);
    expect(existsSync(path.join(root, "etc", "volley"))).toBe(false);
    expect(existsSync(path.join(root, "opt", "volley-agent"))).toBe(false);

    // The line as the page printed it.
    const install = onHost(line);
    expect(install.code, install.out).toBe(0);
    expect(install.out).not.toContain(secret);
    expect(install.out).toContain(`the hub at ${webOrigin}/hub accepted agent ${SECOND_HOST}`);
    expect(install.out).toContain("systemd is not running here");
    const command = /\n {4}(\S+)\n/.exec(install.out)?.[1];
    expect(command, install.out).toBe(path.join(root, "opt", "volley-agent", "run-agent"));

    // The command it printed, run as printed on that host.
    const [bin, ...args] = onSecondHost([command!]);
    agent = spawn(bin!, args, { env: { PATH: process.env.PATH, HOME: work }, stdio: ["ignore", "pipe", "pipe"] });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the installed agent did not connect in 60 s:\n${agentOut.join("")}`)), 60_000);
      const onData = (d: Buffer) => {
        agentOut.push(d.toString());
        if (/connected to/.test(d.toString())) {
          clearTimeout(timer);
          resolve();
        }
      };
      agent!.stdout!.on("data", onData);
      agent!.stderr!.on("data", (d: Buffer) => agentOut.push(d.toString()));
      agent!.once("exit", (code) => reject(new Error(`the installed agent exited with ${code}:\n${agentOut.join("")}`)));
    });

    // Agents: Online under its own host name.
    await page.goto(`${webOrigin}/agents`);
    // One row: the installer's hub check and the agent it installed are one agent (one identity).
    const row = page.getByRole("row").filter({ hasText: SECOND_HOST });
    await expect.poll(() => row.locator('[data-status="online"]').count(), { timeout: 20_000 }).toBe(1);
    expect(await row.count()).toBe(1);
    await screenshot(page, "netns-agent-online");

    // One plan over both hosts; each agent loads its own host's target.
    const plan = shardedEchoPlan("two hosts", `ws://127.0.0.1:${targetPort}/echo?delay=${ECHO_DELAY_MS}`, 2);
    const created = await api<{ id: string }>(stack!, "POST", "/api/v1/runs", { plan });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const run = await waitForFinal<Run>(stack!, created.body.id, 120_000);
    expect(run.status, `${run.reason}\n${[...stack!.output, ...output, ...agentOut].slice(-40).join("\n")}`).toBe("passed");
    const h = createDb(stack!.databaseUrl, 1);
    const shards = await listShards(h.db, run.id).finally(() => h.close());
    expect(shards).toHaveLength(2);
    expect(new Set(shards.map((s) => s.agentId)).size).toBe(2);
    // The targets' own counts: each echoed (and held) every message its host's agent sent.
    const stats = async (prefix: string[] | undefined) => {
      const url = `http://127.0.0.1:${targetPort}/stats`;
      const argv = [...(prefix ?? []), "curl", "-fsS", url];
      const res = spawnSync(argv[0]!, argv.slice(1), { encoding: "utf8" });
      expect(res.status, res.stderr).toBe(0);
      return (JSON.parse(res.stdout) as EchoStats).hold.count;
    };
    const [mainCount, secondCount] = [await stats(undefined), await stats(host.exec)];
    expect(mainCount).toBeGreaterThan(0);
    expect(secondCount).toBeGreaterThan(0);
    expect(run.summary!.messages.sent).toBe(mainCount + secondCount);
    expect(run.summary!.messages.received).toBe(mainCount + secondCount);
    // The hub saw the second host's agent at the second host's address, through web's relay.
    const hello = stack!.output.find((l) => l.includes('"agent connected"') && l.includes(`"name":"${SECOND_HOST}"`));
    expect(hello, stack!.output.filter((l) => l.includes("agent connected")).join("\n")).toContain(`"address":"${host.address}"`);

    // Sign out and in again, from the second host.
    await page.context().clearCookies();
    await page.goto(`${webOrigin}/sign-in`);
    await page.getByLabel("Email").fill("admin@second.example");
    await page.getByLabel("Password").fill("correct horse battery");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${webOrigin}/`);
    await page.goto(`${webOrigin}/agents`);
    await screenshot(page, "netns-signed-in-again");
    await expect.poll(() => page.getByRole("row").filter({ hasText: SECOND_HOST }).count()).toBe(1);
    console.info(
      `second host ${SECOND_HOST}@${host.address} joined via ${webOrigin}/hub; run ${run.id}: ${run.summary!.messages.sent} sent = ${mainCount} + ${secondCount} echoed by the targets`,
    );
  });
});
