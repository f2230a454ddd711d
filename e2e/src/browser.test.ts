import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSocketioEchoServer, startWsEchoServer } from "@volley/targets";
import { startStack, type Stack } from "./stack-fixture";
import { fillSignUp, chromiumInstalled, launchChromium, openPage, screenshot } from "./support/browser";

/**
 * The dashboard in a real browser (Debian's Chromium through playwright-core), against the whole
 * stack: from an empty database, sign up, create a plan from a template, run it against a demo
 * target, watch the live chart receive points, see the summary, compare two runs. Screenshots go
 * to e2e/artifacts/ (CI keeps them).
 */
const hasChromium = chromiumInstalled("browser.test");

let stack: Stack;
let target: Awaited<ReturnType<typeof startSocketioEchoServer>>;
let wsTarget: Awaited<ReturnType<typeof startWsEchoServer>>;
let browser: Browser;
let page: Page;

const shot = (name: string) => screenshot(page, name);

beforeAll(async () => {
  if (!hasChromium) return;
  target = await startSocketioEchoServer({ port: 0, delayMs: 5 });
  wsTarget = await startWsEchoServer({ port: 0, delayMs: 5 });
  stack = await startStack();
  browser = await launchChromium();
  page = await openPage(browser, { width: 1280, height: 800 });
});
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await target?.close();
  await wsTarget?.close();
});

/** Sets a plan-form field the way a person does: select it, type, leave it. */
async function setField(label: string, value: string) {
  const input = page.getByLabel(label, { exact: true });
  await input.fill(value);
  await input.blur();
}

async function runFromEditor(): Promise<string> {
  await page.getByRole("button", { name: /^(Save and run|Run)$/ }).click();
  await page.waitForURL(/\/runs\/run_/);
  return page.url().split("/runs/")[1]!;
}

describe.skipIf(!hasChromium)("the dashboard in Chromium", () => {
  it("signs up, creates a plan from a template, runs it live, and compares two runs", async () => {
    // A fresh install sends its first visitor to sign up; the first account owns the default org.
    await page.goto(stack.webUrl);
    await page.waitForURL(/\/sign-up/);
    await fillSignUp(page, { name: "Ada Owner", email: "ada@example.com" });
    await shot("01-sign-up");
    await page.getByRole("button", { name: /sign up|create/i }).click();
    await page.waitForURL((u) => !/sign-(up|in)/.test(u.pathname));

    await page.goto(`${stack.webUrl}/plans`);
    await page.getByText("No saved plans yet").waitFor();
    await shot("02-plans-empty-with-templates");
    // Template descriptions show their `code` as code, not as backticks.
    const card = page.locator('[data-template="ping-throughput"]');
    expect(await card.locator("code").first().innerText()).toBe("ping");
    expect(await card.innerText()).not.toContain("`");
    await card.click();
    await page.waitForURL(/\/plans\/new\?template=ping-throughput/);

    // Point the template at the demo target and make it small, through the form (it edits the YAML).
    await setField("Name", "browser ping");
    await setField("Target URL", `${target.url}/ping`);
    await setField("Connections", "5");
    await setField("Opened per second", "50");
    await setField("Messages/s", "20");
    await setField("Duration", "4s");
    expect(await page.getByTestId("plan-yaml").innerText()).toContain("browser ping");
    await page.getByText("Plan is valid").waitFor();
    await shot("03-plan-from-template");
    await page.getByRole("button", { name: "Save plan" }).click();
    await page.waitForURL(/\/plans\/pln_/);
    await page.getByRole("heading", { name: "browser ping" }).waitFor();

    const first = await runFromEditor();
    // Live: the latency chart gains points while the run goes on (Socket.IO feed or polling).
    const charts = page.getByTestId("run-charts");
    await charts.waitFor({ timeout: 60_000 });
    await expect.poll(async () => Number(await charts.getAttribute("data-points")), { timeout: 30_000 }).toBeGreaterThanOrEqual(2);
    await shot("04-run-live");
    await page.locator(".badge-lg[data-status=passed], .badge-lg[data-status=failed]").first().waitFor({ timeout: 60_000 });
    await page.getByText("Round trip", { exact: false }).first().waitFor();
    await shot("05-run-summary");

    // A second run of the same plan, then both side by side.
    await page.goBack();
    await page.waitForURL(/\/plans\/pln_/);
    const second = await runFromEditor();
    await page.locator(".badge-lg[data-status=passed], .badge-lg[data-status=failed]").first().waitFor({ timeout: 90_000 });
    await page.goto(`${stack.webUrl}/compare?runs=${first},${second}`);
    await page.locator('[data-testid="compare-charts"][data-runs="2"]').waitFor();
    await shot("06-compare");

    // A capacity search, written in the YAML editor: the run page draws its latency-vs-rate curve.
    await page.goto(`${stack.webUrl}/plans/new?template=capacity-search`);
    await page.locator(".cm-content").click();
    await page.keyboard.press("Control+A");
    await page.keyboard.insertText(
      [
        "name: browser capacity",
        `target: { url: "${wsTarget.url}", protocol: ws }`,
        "connections: { count: 4, rate: 100 }",
        "scenario:",
        "  kind: echo",
        "  message: { rate: 20, per: aggregate }",
        "  duration: 10s",
        "sweep: { step: 20, steps: 3, hold: 1s, gap: 1s, stopWhen: { p95: 1s } }",
        "",
      ].join("\n"),
    );
    await page.getByText("Plan is valid").waitFor();
    await page.getByRole("button", { name: "Run", exact: true }).click();
    await page.waitForURL(/\/runs\/run_/);
    await page.locator(".badge-lg[data-status=passed], .badge-lg[data-status=failed]").first().waitFor({ timeout: 90_000 });
    await shot("07-capacity-search");
    await page.locator('[data-testid="sweep-panel"] canvas').first().waitFor();
    expect(await page.getByTestId("capacity").innerText()).toMatch(/Capacity at p95/);
    await shot("07-capacity-search");
  });
});
