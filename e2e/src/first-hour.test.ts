import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { networkInterfaces, tmpdir } from "node:os";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEMPLATES, type Run } from "@volley/contracts";
import { chromiumInstalled, launchChromium, screenshot, signUp } from "./support/browser";

/**
 * A newcomer's first hour, exactly as the README tells it: `npm start` with nothing set (default
 * host, ports and origins; only a fresh data directory, so the install is new), then Chromium at
 * http://localhost:3000: sign up, sign in again at 127.0.0.1 and at this machine's own address,
 * and run every built-in template from the Plans page as shipped. Each must end `passed`.
 * Screenshots go to e2e/artifacts/first-hour-*.png.
 */
const ROOT = path.resolve(import.meta.dirname, "../..");
const WEB = "http://localhost:3000";
/** Every port `npm start` listens on by default (README): web, hub, the demo targets, PostgreSQL, Redis. */
const DEFAULT_PORTS = [3000, 3001, 9001, 9002, 9003, 9004, 9005, 9006, 9007, 9017, 54329, 6390];

const hasChromium = chromiumInstalled("first-hour.test");
const hasBuild = existsSync(path.join(ROOT, "apps/web/.next/BUILD_ID"));

let stack: ChildProcess | null = null;
let output = "";
let dataDir = "";
let browser: Browser;

const portFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = createServer();
    s.once("error", () => resolve(false));
    s.listen(port, "0.0.0.0", () => s.close(() => resolve(true)));
  });

/** This machine's own non-loopback IPv4 address, as a colleague on the LAN would type it. */
const ownAddress = () =>
  Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === "IPv4" && !a.internal)?.address;

beforeAll(async () => {
  if (!hasChromium) return;
  if (!hasBuild) throw new Error("the web UI is not built (apps/web/.next): `npm test` builds it first; alone, run `npm run build -w @volley/web`");
  const busy: number[] = [];
  for (const port of DEFAULT_PORTS) if (!(await portFree(port))) busy.push(port);
  if (busy.length) throw new Error(`first-hour.test needs the README's default ports; in use: ${busy.join(", ")} (stop \`npm start\` first)`);
  dataDir = mkdtempSync(path.join(tmpdir(), "volley-first-hour-"));
  // What a fresh shell has: no Volley variables at all, only a new data directory.
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, CI: process.env.CI, VOLLEY_DATA_DIR: dataDir };
  stack = spawn("npm", ["start"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  const collect = (d: Buffer) => (output += d.toString());
  stack.stdout!.on("data", collect);
  stack.stderr!.on("data", collect);
  const deadline = Date.now() + 240_000;
  while (!/Volley is up/.test(output)) {
    if (stack.exitCode !== null) throw new Error(`npm start exited with ${stack.exitCode}:\n${output.slice(-4000)}`);
    if (Date.now() > deadline) throw new Error(`npm start not up in 240 s:\n${output.slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  browser = await launchChromium();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  if (stack) {
    // npm, its shell and the front process share a group; the front relays the stop to the
    // supervisor (its own group), which stops every part in order and prints "stopped". npm itself
    // exits at once, so wait for that line: the supervisor writes to our pipes until then.
    if (stack.exitCode === null) process.kill(-stack.pid!, "SIGTERM");
    const deadline = Date.now() + 60_000;
    while (!/\[volley\] stopped/.test(output) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    if (!/\[volley\] stopped/.test(output)) console.warn(`first-hour.test: npm start did not say "stopped" within 60 s:\n${output.slice(-2000)}`);
  }
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}, 90_000);

/** The SocketCluster benchmark at full size (100 × 1,700 pings/s): far beyond one local agent. */
const overloadPlan = (thresholdMetric: string) =>
  [
    "name: too much for one agent",
    "target: { url: http://127.0.0.1:9002/ping, protocol: socketio, socketio: { transports: [websocket], event: ping, ack: true } }",
    "connections: { count: 100, rate: 1 }",
    "scenario: { kind: echo, message: { rate: 1700 }, duration: 30s }",
    `thresholds: [ "${thresholdMetric} < 200ms" ]`,
    "",
  ].join("\n");

const shot = (page: Page, name: string) => screenshot(page, `first-hour-${name}`);

async function signIn(context: BrowserContext, base: string): Promise<Page> {
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  await page.goto(`${base}/sign-in`);
  await page.getByLabel("Email").fill("ada@example.com");
  await page.getByLabel("Password").fill("correct horse battery");
  await page.getByRole("button", { name: /sign in/i }).click();
  await page.waitForURL((u) => !/sign-(up|in)/.test(u.pathname));
  return page;
}

describe.skipIf(!hasChromium)("a newcomer's first hour on a default `npm start`", () => {
  it("signs up at http://localhost:3000, and signs in at 127.0.0.1 and this machine's address", async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    await page.goto(WEB);
    await page.waitForURL(/\/sign-up/);
    // The password rule is said before anyone types, not only after a refused attempt.
    expect(await page.locator("#password-rule").innerText()).toBe("At least 8 characters.");
    await signUp(page, { name: "Ada Owner", email: "ada@example.com" });
    await page.waitForURL((u) => !/sign-(up|in)/.test(u.pathname));
    await shot(page, "01-signed-up");
    await context.close();

    for (const host of ["127.0.0.1", ownAddress()].filter(Boolean)) {
      const other = await browser.newContext();
      const signedIn = await signIn(other, `http://${host}:3000`);
      expect(new URL(signedIn.url()).host).toBe(`${host}:3000`);
      await other.close();
    }
  });

  it("Agents → Add agent opened at localhost warns that its line only works on this machine, and names this machine's address instead", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await signIn(context, WEB);
    await page.goto(`${WEB}/agents`);
    await page.getByLabel("Token name").fill("first hour");
    await page.getByRole("button", { name: "Create join token" }).click();
    const line = (await page.getByTestId("agent-command-script").textContent())!.trim();
    expect(line).toContain("--hub http://localhost:3000/hub");
    const warning = page.getByTestId("agent-loopback-warning");
    await expect.poll(() => warning.count()).toBe(1);
    const own = ownAddress();
    if (own) expect(await warning.getByRole("link", { name: `http://${own}:3000` }).count()).toBe(1);
    await shot(page, "02-add-agent-loopback");
    await context.close();
  });

  it("refuses sign-in posted from a foreign origin (CSRF protection stays on)", async () => {
    const res = await fetch(`${WEB}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: "http://evil.example", "sec-fetch-site": "cross-site", "sec-fetch-mode": "cors", cookie: "x=1" },
      body: JSON.stringify({ email: "ada@example.com", password: "correct horse battery" }),
    });
    expect(res.status).toBe(403);
  });

  it("marks a misspelled threshold metric inline, and warns before a plan that would saturate the agent", async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await signIn(context, WEB);
    await page.goto(`${WEB}/plans/new?template=ping-throughput`);
    await page.getByText("Plan is valid").waitFor();
    const editor = page.locator(".cm-content");
    await editor.click();
    await page.keyboard.press("Control+A");
    await page.keyboard.insertText(overloadPlan("latncy.p95"));
    // The misspelling is underlined where it is written, with the nearest known name.
    await page.locator(".cm-lintRange-error").first().waitFor();
    await expect.poll(() => page.locator(".issues").first().innerText()).toMatch(/did you mean "latency.p95"/);
    await shot(page, "editor-misspelled-metric");
    await page.keyboard.press("Control+A");
    await page.keyboard.insertText(overloadPlan("latency.p95"));
    await page.getByText("Plan is valid").waitFor();
    // 170,000 pings/s is far beyond one local agent: the editor says so before anything runs.
    await expect.poll(() => page.getByTestId("preflight-warnings").innerText(), { timeout: 15_000 }).toMatch(/the agents, not the server, may set the latency/);
    await shot(page, "editor-saturation-warning");
    await context.close();
  });

  it("runs every built-in template from the Plans page, as shipped, and each passes", async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await signIn(context, WEB);
    const results: { id: string; status: string; reason: string | null; seconds: number }[] = [];
    for (const t of TEMPLATES) {
      const started = Date.now();
      await page.goto(`${WEB}/plans`);
      await page.locator(`[data-template="${t.id}"]`).click();
      await page.waitForURL(new RegExp(`/plans/new\\?template=${t.id}`));
      await page.getByText("Plan is valid").waitFor();
      await page.getByRole("button", { name: "Run", exact: true }).click();
      await page.waitForURL(/\/runs\/run_/);
      const runId = page.url().split("/runs/")[1]!;
      let run: Run;
      for (;;) {
        run = (await (await page.request.get(`${WEB}/api/v1/runs/${runId}`)).json()) as Run;
        if (!["queued", "running"].includes(run.status)) break;
        if (Date.now() - started > 240_000) throw new Error(`${t.id}: still ${run.status} after 240 s`);
        await new Promise((r) => setTimeout(r, 1000));
      }
      await page.locator(`.badge-lg[data-status=${run.status}]`).first().waitFor({ timeout: 30_000 });
      await shot(page, `template-${t.id}`);
      results.push({ id: t.id, status: run.status, reason: run.reason, seconds: Math.round((Date.now() - started) / 1000) });
    }
    console.log(`first-hour templates: ${JSON.stringify(results)}`);
    // Passed is the verdict; a sweep's reason may say its capacity is a lower bound (the agent, on a
    // busy machine, limited a step), which is information, not a failure.
    expect(results.map((r) => `${r.id}: ${r.status}${r.status === "passed" ? "" : ` (${r.reason})`}`)).toEqual(TEMPLATES.map((t) => `${t.id}: passed`));
    await context.close();
  }, 1_800_000);
});
