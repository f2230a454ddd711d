import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PlanRecord } from "@volley/contracts";
import { startWsEchoServer, type WsEchoServer } from "@volley/targets";
import { api, startStack, waitForFinal, type Stack } from "./stack-fixture";
import { chromiumInstalled, launchChromium, openPage, screenshot, signUp } from "./support/browser";

/**
 * Baselines, compare deltas, the plan trend, tags, run-list filters, share links, schedules and
 * webhooks in Chromium against real web, hub and agent processes. One plan runs against a fast
 * echo server (marked as the baseline in the UI), then, as version 2, against one that holds each
 * reply 40 ms: the compare table shows its p95 in red against the baseline and the trend flags the
 * regression. A Slack-format webhook gets a test delivery through the hub to a real local receiver.
 * Screenshots go to e2e/artifacts/compare-*.png.
 */
const hasChromium = chromiumInstalled("compare-browser.test");

let stack: Stack;
let fast: WsEchoServer;
let slow: WsEchoServer;
let receiver: Server;
const received: { headers: Record<string, string | string[] | undefined>; body: string }[] = [];
let browser: Browser;
let page: Page;

const shot = (name: string) => screenshot(page, `compare-${name}`);

const planDoc = (url: string) => ({
  name: "checkout echo",
  target: { url, protocol: "ws" },
  connections: { count: 4, rate: 50 },
  scenario: { kind: "echo", message: { bytes: 64, rate: 10 }, duration: "3s" },
});

async function runPlan(planId: string): Promise<string> {
  const res = await api<{ id: string }>(stack, "POST", "/api/v1/runs", { planId });
  expect(res.status).toBe(201);
  const run = await waitForFinal<{ status: string }>(stack, res.body.id, 90_000);
  expect(run.status).toBe("passed");
  return res.body.id;
}

beforeAll(async () => {
  if (!hasChromium) return;
  fast = await startWsEchoServer({ port: 0 });
  slow = await startWsEchoServer({ port: 0, delayMs: 40 });
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(200, { "content-type": "text/plain" }).end("ok from the test receiver");
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  stack = await startStack();
  browser = await launchChromium();
  page = await openPage(browser, { width: 1440, height: 900 });
  await page.goto(`${stack.webUrl}/sign-up`);
  await signUp(page, { name: "Bea Baseline", email: "bea@example.com" });
  await page.waitForURL(`${stack.webUrl}/`);
});
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await fast?.close();
  await slow?.close();
  await new Promise<void>((r) => (receiver ? receiver.close(() => r()) : r()));
});

describe.skipIf(!hasChromium)("baselines, compare and trend in Chromium", () => {
  it("marks a baseline, shows deltas against it, flags the regression on the trend, filters by tag and shares the run", async () => {
    const created = await api<PlanRecord>(stack, "POST", "/api/v1/plans", { plan: planDoc(fast.url) });
    expect(created.status).toBe(201);
    const planId = created.body.id;
    const base = await runPlan(planId);
    expect((await api(stack, "PUT", `/api/v1/plans/${planId}`, { plan: planDoc(slow.url) })).status).toBe(200);
    const regressed = await runPlan(planId);

    // The baseline is marked on its run page.
    await page.goto(`${stack.webUrl}/runs/${base}`);
    await page.getByTestId("baseline-toggle").click();
    await page.getByTestId("baseline-badge").waitFor();
    await shot("01-baseline-marked");

    // Tags on the slow run, through its page.
    await page.goto(`${stack.webUrl}/runs/${regressed}`);
    await page.getByLabel("Tags of this run").fill("slow-server, v2");
    await page.getByRole("button", { name: "Save tags and notes" }).click();
    await page.locator(".meta-tags .tag-chip", { hasText: "slow-server" }).waitFor();

    // Compare: pick both runs in the picker (filtered to the plan), the table shows the deltas.
    await page.goto(`${stack.webUrl}/compare`);
    await page.getByLabel("Plan").selectOption(planId);
    // The selection lives in the address (a shareable comparison): each click replaces it.
    await page.locator(`[data-testid="compare-picker"] input[data-run="${base}"]`).click();
    await page.waitForURL(new RegExp(`runs=${base}$`));
    await page.locator(`[data-testid="compare-picker"] input[data-run="${regressed}"]`).click();
    await page.waitForURL(new RegExp(`runs=${base},${regressed}$`));
    const table = page.getByTestId("compare-table");
    await table.waitFor();
    await page.locator('[data-testid="compare-charts"][data-runs="2"]').waitFor();
    // The baseline is the reference: the slow run's p95 is worse (red), with its +ms and +%.
    const p95 = table.locator('tr[data-metric="p95"] td[data-verdict]');
    expect(await p95.nth(0).getAttribute("data-verdict")).toBe("reference");
    expect(await p95.nth(1).getAttribute("data-verdict")).toBe("worse");
    expect(await p95.nth(1).locator(".delta.bad").innerText()).toMatch(/^\+[\d.,]+ ms \(\+[\d.]+%\)$/);
    await shot("02-compare-deltas");

    // The trend flags the slow run against the baseline.
    await page.goto(`${stack.webUrl}/plans/${planId}/trend`);
    const trend = page.getByTestId("trend-table");
    await trend.waitFor();
    expect(await trend.locator(`tr[data-run="${base}"] .baseline-badge`).count()).toBe(1);
    expect(await trend.locator(`tr[data-run="${regressed}"] [data-testid="regression"]`).innerText()).toMatch(/regressed: .*p95/);
    await shot("03-trend");

    // The runs list filtered by tag shows the tagged run only.
    await page.goto(`${stack.webUrl}/`);
    await page.getByLabel("Tag").fill("slow-server");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/tag=slow-server/);
    await expect.poll(() => page.locator(".runs-table tbody tr").count()).toBe(1);
    // A select applies at once, and takes the search typed beside it (not the last applied one).
    await page.getByLabel("Search runs by name or id").fill(regressed);
    await page.getByLabel("Plan").selectOption(planId);
    await page.waitForURL(
      (u) => u.searchParams.get("tag") === "slow-server" && u.searchParams.get("planId") === planId && u.searchParams.get("q") === regressed,
    );
    await expect.poll(() => page.locator(".runs-table tbody tr").count()).toBe(1);
    expect(await page.locator(".runs-table tbody").innerText()).toContain(regressed);
    await shot("04-runs-filtered");

    // A read-only link opens the run, read-only, without changing the member's active org.
    await page.goto(`${stack.webUrl}/runs/${base}`);
    await page.getByTestId("share-button").click();
    const link = await page.getByLabel("Share link").inputValue();
    expect(link).toMatch(/\/share\/shr_/);
    await page.goto(link);
    await page.waitForURL(/\/share\/shr_[^/]+\/view$/);
    await page.getByTestId("shared-run").waitFor();
    expect(await page.getByTestId("shared-run").innerText()).toMatch(/read-only/);
  });

  it("a plan's schedule names a bad cron and shows the next run of a good one", async () => {
    const plans = await api<{ plans: PlanRecord[] }>(stack, "GET", "/api/v1/plans");
    const planId = plans.body.plans[0]!.id;
    await page.goto(`${stack.webUrl}/plans/${planId}`);
    const editor = page.getByTestId("schedule-editor");
    await editor.getByLabel("Cron expression").fill("0 25 * * *");
    await editor.getByRole("button", { name: "Schedule" }).click();
    await expect.poll(() => editor.getByRole("alert").innerText()).toMatch(/^cron: "0 25 \* \* \*" .*use 5 fields/);
    await editor.getByLabel("Cron expression").fill("30 2 * * 1-5");
    await editor.getByRole("button", { name: "Schedule" }).click();
    await expect.poll(() => editor.getByTestId("schedule-state").innerText()).toMatch(/Runs 30 2 \* \* 1-5 \(UTC\)\. Next run: \S/);
    await shot("05-schedule");
  });

  it("a Slack-format webhook gets a test delivery through the hub, and its answer shows in the deliveries", async () => {
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/slack`;
    await page.goto(`${stack.webUrl}/settings/webhooks`);
    await page.getByLabel("Receiver URL").fill(url);
    await page.getByLabel("Format").selectOption("slack");
    await page.getByRole("button", { name: "Add webhook" }).click();
    await page.locator(".secret-once").waitFor();
    await page.getByTestId("webhook-test").click();
    await expect.poll(() => page.getByTestId("webhook-notice").innerText(), { timeout: 20_000 }).toMatch(/Test delivered: the receiver answered 200/);
    const rows = page.getByTestId("deliveries").locator("tbody tr");
    expect(await rows.first().innerText()).toMatch(/test\s+200\s+\d+ ms\s+ok from the test receiver/);
    expect(received).toHaveLength(1);
    expect(received[0]!.headers["x-volley-event"]).toBe("webhook.test");
    expect(JSON.parse(received[0]!.body)).toEqual({ text: ":wave: Volley test delivery: This is a test delivery from Volley; your receiver got it." });
    await shot("06-webhooks");
  });
});
