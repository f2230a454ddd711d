import { spawn } from "node:child_process";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "@volley/devstack";
import { startJsonRpcWs, type JsonRpcStats, type TestApp } from "@volley/targets";
import { api, startStack, waitForFinal, type Stack } from "./stack-fixture";
import { chromiumInstalled, launchChromium, openPage, screenshot, signUp } from "./support/browser";

/**
 * Live control, as a user does it: a JSON-RPC app (its own ids, its own call counter) under a
 * 14 s run; on the run page the progress bar says how far it is, the rate is raised from 5 to 15
 * calls/s per connection (confirmed, as it triples the load) and the connections from 4 to 6, then
 * `volley rate <id> --scale 1` from a terminal puts the rate back. The seconds stored show each
 * step, the timelines mark the changes, and the app's own count of calls equals what Volley sent
 * and had answered.
 * Screenshots: e2e/artifacts/live-control-*.png.
 */
const hasChromium = chromiumInstalled("live-control-browser.test");
const BIN = path.join(repoRoot, "apps", "cli", "bin", "volley.js");

let stack: Stack;
let app: TestApp<JsonRpcStats>;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  if (!hasChromium) return;
  app = await startJsonRpcWs();
  stack = await startStack();
  browser = await launchChromium();
  page = await openPage(browser, { width: 1440, height: 900 });
});
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await app?.close();
});

function volley(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, VOLLEY_URL: stack.webUrl, VOLLEY_TOKEN: stack.token },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

interface Point {
  index: number;
  t: number;
  sent: number;
}

describe.skipIf(!hasChromium)("live rate control in Chromium", () => {
  it("raises a running run's rate from its page, lowers it from the CLI, and every call is counted by the app", async () => {
    await page.goto(`${stack.webUrl}/sign-up`);
    await signUp(page, { name: "Lin Operator", email: "lin@example.com" });
    await page.waitForURL((u) => !/sign-(up|in)/.test(u.pathname));

    const created = await api<{ id: string }>(stack, "POST", "/api/v1/runs", {
      plan: {
        name: "live control",
        target: { url: app.url, protocol: "ws" },
        connections: { count: 4, rate: 100 },
        scenario: { kind: "echo", duration: "14s", message: { rate: 5, timeout: "5s" } },
        flow: {
          messages: [
            {
              json: { jsonrpc: "2.0", id: "{{ msg.id }}", method: "echo", params: { seq: "{{ msg.seq }}" } },
              reply: { match: { path: "$.id", equals: "{{ msg.id }}" } },
            },
          ],
        },
      },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    await page.goto(`${stack.webUrl}/runs/${id}`);

    // Progress: how far along the plan's 14 s it is, and what it waits for after.
    const progress = page.getByTestId("run-progress");
    await expect.poll(() => progress.innerText(), { timeout: 30_000 }).toMatch(/^\d+ s of 14 s · about \d+ s left \(then up to 5 s for the last replies\)$/);
    expect(await page.getByTestId("current-rate").innerText()).toBe("5");
    await screenshot(page, "live-control-running");

    // Three times the load: the page asks first.
    page.once("dialog", (d) => void d.accept());
    await page.getByLabel("New rate (msg/s per connection)").fill("15");
    await page.getByRole("button", { name: "Set rate" }).click();
    await expect
      .poll(() => page.getByTestId("rate-changes").innerText(), { timeout: 10_000 })
      .toMatch(/rate → 15 msg\/s per connection \(×3\) by lin@example\.com/);
    expect(await page.getByTestId("current-rate").innerText()).toBe("15");

    // Two more connections (no question: it is less than twice the load).
    await page.getByLabel("New connections (connections)").fill("6");
    await page.getByRole("button", { name: "Set connections" }).click();
    await expect.poll(() => page.getByTestId("rate-changes").innerText(), { timeout: 10_000 }).toMatch(/connections → 6 \(×1\.5\) by lin@example\.com/);
    expect(await page.getByTestId("current-connections").innerText()).toBe("6");

    // Four seconds later, back to the plan's rate from a terminal.
    await new Promise((r) => setTimeout(r, 4000));
    const cli = await volley(["rate", id, "--scale", "1"]);
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toMatch(new RegExp(`^run ${id}: rate → 5 msg/s per connection \\(×1 the plan's\\) from \\S+ \\(in [\\d.]+ s\\)\\n$`));

    const run = await waitForFinal<{
      status: string;
      reason: string | null;
      summary: { messages: { sent: number; received: number; lost: number }; connect: { opened: number } };
      rateChanges: { scale: number; at: number; by: string }[];
    }>(stack, id, 90_000);
    expect(run.status, run.reason ?? "").toBe("passed");
    expect(run.rateChanges.map((c) => c.scale)).toEqual([3, 1.5, 1]);
    expect(run.rateChanges[2]!.by).toMatch(/^API token /);

    // The app's own counter: every call Volley sent reached it and was answered, nothing else.
    const stats = app.stats();
    expect(stats.requests).toBe(run.summary.messages.sent);
    expect(stats.responses).toBe(run.summary.messages.sent);
    expect(run.summary.messages.received).toBe(run.summary.messages.sent);
    expect(run.summary.messages.lost).toBe(0);
    // More than the plan alone would send (4 × 5/s × 14 s = 280): over 4 s at 3× the rate and more.
    expect(run.summary.messages.sent).toBeGreaterThan(280 + 4 * 10 * 4);
    expect(run.summary.connect.opened).toBe(6);

    // Whole seconds: 4 × 5/s before the first change, 6 × 15/s once both applied (the two added
    // connections open within 20 ms), and 6 × 5/s after the CLI's.
    const { body } = await api<{ intervals: Point[] }>(stack, "GET", `/api/v1/runs/${id}/intervals`);
    const [up, more, down] = run.rateChanges.map((c) => c.at) as [number, number, number];
    const whole = body.intervals.slice(1, -1);
    const before = whole.filter((p) => p.t + 1000 <= up).map((p) => p.sent);
    const busiest = whole.filter((p) => p.t >= more + 100 && p.t + 1000 <= down).map((p) => p.sent);
    const after = whole.filter((p) => p.t >= down).map((p) => p.sent);
    expect(busiest.length).toBeGreaterThan(0);
    for (const n of before) expect(n).toBeLessThanOrEqual(21);
    for (const n of busiest) expect(n).toBeGreaterThanOrEqual(88);
    for (const n of after) expect(n).toBeLessThanOrEqual(31);

    // The finished page: both changes listed, and a marked line on each timeline.
    await page.reload();
    await page.getByTestId("run-charts").waitFor();
    expect(await page.getByTestId("rate-changes").locator("li").count()).toBe(3);
    const markers = JSON.parse((await page.locator(".chart [data-markers]").first().getAttribute("data-markers")) ?? "[]") as {
      label: string;
      y: number;
      from: number;
      to: number;
    }[];
    // Labels of changes close together stack: no two on one row overlap.
    for (const a of markers) for (const b of markers) if (a !== b && a.y === b.y) expect(a.to < b.from || b.to < a.from, `${a.label} / ${b.label}`).toBe(true);
    expect(markers.map((m) => m.label)).toEqual([
      "rate → 15 msg/s per connection (×3)",
      "connections → 6 (×1.5)",
      "rate → 5 msg/s per connection (the plan's)",
    ]);
    await screenshot(page, "live-control-final");

    // Compared with anything, the run says its load was changed while it ran.
    await page.goto(`${stack.webUrl}/compare?runs=${id}`);
    expect(await page.getByTestId("rate-changed").innerText()).toMatch(/^live control had its rate or connections changed while it ran/);
  }, 180_000);
});
