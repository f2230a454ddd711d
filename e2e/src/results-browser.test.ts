import { writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startJsonRpcWs,
  startWsEchoServer,
  startWsShop,
  WS_SHOP_PATHS,
  type JsonRpcStats,
  type TestApp,
  type WsEchoServer,
  type WsShop,
} from "@volley/targets";
import { api, startStack, waitForFinal, type Stack } from "./stack-fixture";
import { ARTIFACTS, chromiumInstalled, launchChromium, openPage, screenshot, signUp } from "./support/browser";

/**
 * The run page's results in Chromium at 1440 px: headline cards with the plan's thresholds drawn,
 * legends showing the run's figures off the chart, errors with what the server said (a JSON-RPC
 * gateway refusing connections with HTTP 503 and closing fast callers with 1008), a stage plan
 * described by its stages, the per-agent table whole, and the HTML report: downloaded from the
 * API, opened offline with scripts off, and the page's print view. Screenshots: e2e/artifacts/results-*.png.
 */
const hasChromium = chromiumInstalled("results-browser.test");

let stack: Stack;
let echo: WsEchoServer;
let gateway: TestApp<JsonRpcStats>;
let shop: WsShop;
let browser: Browser;
let page: Page;

const shot = (name: string) => screenshot(page, name);

beforeAll(async () => {
  if (!hasChromium) return;
  echo = await startWsEchoServer({ port: 0, delayMs: 5 });
  gateway = await startJsonRpcWs({ maxConnections: 4, maxCallsPerSecond: 5 });
  shop = await startWsShop();
  stack = await startStack();
  browser = await launchChromium();
  page = await openPage(browser, { width: 1440, height: 900 });
});
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await echo?.close();
  await gateway?.close();
  await shop?.close();
});

async function startRun(plan: unknown): Promise<string> {
  const res = await api<{ id: string }>(stack, "POST", "/api/v1/runs", { plan });
  expect(res.status).toBe(201);
  await waitForFinal(stack, res.body.id, 90_000);
  return res.body.id;
}

describe.skipIf(!hasChromium)("run results in Chromium", () => {
  it("shows headline cards with threshold lines, run values in legends, error samples, and exports a self-contained report", async () => {
    await page.goto(`${stack.webUrl}/sign-up`);
    await signUp(page, { name: "Ada Owner", email: "ada@example.com" });
    await page.waitForURL((u) => !/sign-(up|in)/.test(u.pathname));

    // A stage plan against the echo server, with thresholds on three cards.
    const staged = await startRun({
      name: "results stages",
      target: { url: echo.url, protocol: "ws" },
      connections: {
        count: 6,
        rate: 100,
        stages: [
          { duration: "2s", target: 6 },
          { duration: "2s", target: 3 },
        ],
      },
      scenario: { kind: "echo", message: { rate: 4, timeout: "2s" }, duration: "4s" },
      thresholds: ["latency.p95 < 200ms", "latency.p99 < 2ms", "errors.rate < 1%", "throughput.sent > 5"],
    });
    await page.goto(`${stack.webUrl}/runs/${staged}`);
    const cards = page.getByTestId("headline-cards");
    await cards.waitFor();
    expect(await page.getByTestId("card-rate").innerText()).toMatch(/^[\d.,]+\/s$/);
    expect(await page.getByTestId("card-p95").innerText()).toMatch(/ ms$/);
    expect(await page.getByTestId("card-connections").innerText()).toBe("6");
    // Each threshold is a dashed line on its card's chart: p95 passed (grey), p99 < 2 ms failed (red).
    expect(await page.locator('[data-card="p95"] line[data-threshold="latency.p95 < 200ms"]').getAttribute("stroke")).toBe("#6b7280");
    expect(await page.locator('[data-card="p99"] line[data-threshold="latency.p99 < 2ms"]').getAttribute("stroke")).toBe("#dc2626");
    await page.locator('[data-card="errors"] line[data-threshold="errors.rate < 1%"]').waitFor({ state: "attached" });
    await page.locator('[data-card="rate"] line[data-threshold="throughput.sent > 5"]').waitFor({ state: "attached" });
    // The stage plan is described by its stages, never as "6 connections at 100/s".
    expect(await page.getByTestId("plan-connections").innerText()).toBe("stages 2.0 s → 6, 2.0 s → 3 (peak 6 connections)");
    // Off the charts, legends show the run's figures, not dashes.
    await page.mouse.move(5, 5);
    const legendValues = await page.locator('[data-testid="run-charts"] .u-legend .u-value').allInnerTexts();
    expect(legendValues.length).toBeGreaterThan(8);
    expect(legendValues.filter((v) => v.trim() === "—")).toEqual([]);
    expect(legendValues).toContain("whole run");
    // Hovering a chart shows the second under the cursor instead.
    const latencyChart = page.locator('[data-testid="run-charts"] .u-over').first();
    const box = (await latencyChart.boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    expect(await page.locator('[data-testid="run-charts"] .u-legend').first().locator(".u-value").first().innerText()).toMatch(/^\d+s$/);
    await page.mouse.move(5, 5);
    // The per-agent table fits its panel at 1440 px (it was cut off beside the spectrum).
    const agents = page.getByTestId("agent-breakdown");
    await agents.waitFor();
    await shot("results-01-cards-1440");
    const widths = await agents.evaluate((t) => ({ table: t.scrollWidth, room: t.parentElement!.clientWidth }));
    expect(widths.table, JSON.stringify(widths)).toBeLessThanOrEqual(widths.room + 1);

    // A JSON-RPC gateway with limits: 2 of 6 connections refused 503, the rest closed 1008 for calling too fast.
    const limited = await startRun({
      name: "results errors",
      target: { url: gateway.url, protocol: "ws" },
      connections: { count: 6, rate: 100 },
      scenario: { kind: "echo", message: { rate: 20, timeout: "1s" }, duration: "2s" },
      thresholds: ["errors.rate < 1%"],
      sanity: false,
    });
    await page.goto(`${stack.webUrl}/runs/${limited}`);
    await page.getByTestId("run-summary").waitFor();
    const stats = gateway.stats();
    expect(stats.refused).toBe(2);
    expect(await page.getByTestId("error-samples-handshake").innerText()).toBe("connect: HTTP 503");
    expect(await page.getByTestId("error-samples-closed").innerText()).toBe("close 1008 (policy violation): rate limit: more than 5 calls in a second");
    expect(await page.getByTestId("error-samples-protocol").innerText()).toContain("Parse error: the frame is not JSON");
    expect(await page.locator('[data-card="errors"]').getAttribute("class")).toContain("bad");
    await shot("results-02-errors-with-samples");

    // The report: from the API, self-contained, opened offline with scripts off.
    const res = await fetch(`${stack.webUrl}/api/v1/runs/${limited}/report.html`, { headers: { authorization: `Bearer ${stack.token}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="${limited}-report.html"`);
    const html = await res.text();
    expect(html).not.toMatch(/<script|<link|src=|@import|url\(/i);
    expect(html).toContain("close 1008 (policy violation): rate limit: more than 5 calls in a second");
    const file = path.join(ARTIFACTS, "results-report.html");
    writeFileSync(file, html);
    const offline = await browser.newContext({ viewport: { width: 1000, height: 900 }, javaScriptEnabled: false, offline: true });
    const reportPage = await offline.newPage();
    const requests: string[] = [];
    reportPage.on("request", (r) => requests.push(r.url()));
    await reportPage.goto(pathToFileURL(file).href);
    expect(await reportPage.locator("svg").count()).toBeGreaterThanOrEqual(5);
    expect(await reportPage.locator("h1").innerText()).toContain("results errors");
    expect(requests.filter((u) => !u.startsWith("file:"))).toEqual([]);
    await screenshot(reportPage, "results-03-report-offline");
    await offline.close();
    // Unauthenticated: the API's error shape, not a report.
    expect((await fetch(`${stack.webUrl}/api/v1/runs/${limited}/report.html`)).status).toBe(401);

    // A capacity search whose every step held: the card says "≥", the curve's legend its marked point.
    const sweep = await startRun({
      name: "results capacity",
      target: { url: echo.url, protocol: "ws" },
      connections: { count: 2, rate: 100 },
      scenario: { kind: "echo", message: { rate: 10, per: "aggregate" }, duration: "10s" },
      sweep: { step: 10, steps: 2, hold: "1s", gap: "1s", stopWhen: { p95: "1s" } },
    });
    await page.goto(`${stack.webUrl}/runs/${sweep}`);
    await page.getByTestId("headline-cards").waitFor();
    expect(await page.getByTestId("card-capacity").innerText()).toMatch(/^≥ [\d.]+ msg\/s$/);
    // Seven cards a row: "Capacity at p95 ≤ …" wraps in its card instead of being cut off.
    const cut = await page
      .locator(".headline-card .headline-label, .headline-card .headline-value")
      .evaluateAll((els) => els.filter((el) => el.scrollWidth > el.clientWidth + 1).map((el) => el.textContent));
    expect(cut).toEqual([]);
    await page.locator('[data-testid="sweep-panel"] canvas').first().waitFor();
    await page.mouse.move(5, 5);
    const sweepLegend = await page.locator('[data-testid="sweep-chart"] .u-legend .u-value').allInnerTexts();
    expect(sweepLegend[0]).toBe("marked point");
    expect(sweepLegend[1]).toMatch(/ ms at [\d.]+\/s$/);
    // Its 1 s rule is far above steps of a few ms: named above the chart rather than drawn, which
    // would flatten the curve onto the axis; on a log scale it is drawn.
    expect(await page.getByTestId("sweep-rule-above").innerText()).toMatch(/^stop rule: p95 ≤ 1000 ms: above this chart, whose highest step is [\d.]+ ms/);
    await shot("results-05-capacity");
    await page.getByTestId("sweep-chart").getByLabel("log scale").check();
    await page.getByTestId("sweep-rule-above").waitFor({ state: "detached" });
    // Its report carries the same curve as inline SVG: a point per step, the rule named above it.
    const sweepReport = await (await fetch(`${stack.webUrl}/api/v1/runs/${sweep}/report.html`, { headers: { authorization: `Bearer ${stack.token}` } })).text();
    expect(sweepReport).toContain('data-chart="sweep"');
    expect(sweepReport.match(/<circle[^>]*data-point="step \d+: /g)).toHaveLength(2);
    expect(sweepReport).toMatch(/stop rule: p95 ≤ 1000 ms: above this chart, whose highest step is [\d.]+ ms/);

    // The run page's download link and its print view.
    await page.goto(`${stack.webUrl}/runs/${staged}`);
    const download = page.waitForEvent("download");
    await page.getByTestId("report-download").click();
    expect((await download).suggestedFilename()).toBe(`${staged}-report.html`);
    await page.emulateMedia({ media: "print" });
    expect(await page.locator(".topbar").isVisible()).toBe(false);
    expect(await page.getByTestId("run-exports").isVisible()).toBe(false);
    await shot("results-04-print-view");
    await page.emulateMedia({ media: "screen" });
  });

  it("draws a reconnect storm: the shop restarts under 30 users, each back by its backoff, the storm's counts the shop's own", async () => {
    const USERS = 30;
    const res = await api<{ id: string }>(stack, "POST", "/api/v1/runs", {
      plan: {
        name: "results reconnect storm",
        target: { url: shop.url, protocol: "ws", connectTimeout: "5s" },
        connections: { count: USERS },
        scenario: { kind: "users", arrivalRate: 100, duration: "300ms", maxUserTime: "20s" },
        flow: {
          steps: [
            {
              request: {
                name: "login",
                method: "POST",
                url: `${shop.httpUrl}${WS_SHOP_PATHS.login}`,
                json: { user: "u{{ conn.index }}", password: "secret" },
                capture: { token: "$.token" },
              },
            },
            { connect: { query: { token: "{{ vars.token }}" }, reconnect: { policy: "backoff", delay: "1s", maxDelay: "5s", jitter: 0.5, maxAttempts: 5 } } },
            { think: "5s" },
            { disconnect: true },
          ],
        },
      },
    });
    expect(res.status).toBe(201);
    // Once every user is in, and past their first second, the shop restarts: every socket closed at once (1012).
    const before = shop.stats().connections;
    const deadline = Date.now() + 60_000;
    while (shop.stats().connections - before < USERS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 1300));
    expect(shop.restart()).toBe(USERS);
    const run = await waitForFinal<{ status: string; summary: { reconnectStorms?: { dropped: number; reconnected: number }[] } }>(stack, res.body.id, 90_000);
    expect(run.status).toBe("passed");
    expect(run.summary.reconnectStorms).toHaveLength(1);
    expect(run.summary.reconnectStorms![0]).toMatchObject({ dropped: USERS, reconnected: USERS });
    expect(shop.stats().connections - before).toBe(2 * USERS);

    await page.goto(`${stack.webUrl}/runs/${res.body.id}`);
    const panel = page.getByTestId("reconnect-storms");
    await panel.waitFor();
    await panel.locator("canvas").first().waitFor();
    expect(await panel.getByRole("table", { name: "Reconnect storms" }).innerText()).toContain(String(USERS));
    await panel.scrollIntoViewIfNeeded();
    await shot("results-06-reconnect-storm");
  });
});
