import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PlanRecord } from "@volley/contracts";
import { startWsEchoServer, type WsEchoServer } from "@volley/targets";
import { api, startStack, waitForFinal, type Stack } from "./stack-fixture";
import { ARTIFACTS, chromiumInstalled, launchChromium, openPage, screenshot, signUp } from "./support/browser";

/**
 * Every main page at a phone's 390 px and a desktop's 1440 px in Chromium: no page wider than the
 * screen (tables scroll inside their panels), the nav reachable through a menu on the phone, and
 * the run page's charts legible (axis titles clear of their ticks, stage labels and card titles
 * whole, a short run drawn on its own seconds, a users run's spectrum in ms, the spectrum's p99 the
 * table's); three runs compared fit their panel; Stop asks first. One stack, runs of a few seconds
 * against an echo server. Screenshots go to e2e/artifacts/phone-*.png.
 */
const hasChromium = chromiumInstalled("phone-browser.test");

let stack: Stack;
let echo: WsEchoServer;
let browser: Browser;
let phone: Page;
let desktop: Page;
const runs: Record<"staged" | "short" | "users" | "refused", string> = { staged: "", short: "", users: "", refused: "" };
let planId = "";

async function startRun(plan: unknown): Promise<string> {
  const res = await api<{ id: string }>(stack, "POST", "/api/v1/runs", { plan });
  expect(res.status).toBe(201);
  await waitForFinal(stack, res.body.id, 90_000);
  return res.body.id;
}

beforeAll(async () => {
  if (!hasChromium) return;
  echo = await startWsEchoServer({ port: 0, delayMs: 2 });
  stack = await startStack();
  const created = await api<PlanRecord>(stack, "POST", "/api/v1/plans", {
    plan: {
      name: "phone echo",
      target: { url: echo.url, protocol: "ws" },
      connections: { count: 4, rate: 100 },
      scenario: { kind: "echo", message: { rate: 5 }, duration: "2s" },
    },
  });
  expect(created.status).toBe(201);
  planId = created.body.id;
  runs.staged = await startRun({
    name: "phone stages — four connections, then two, echoing",
    target: { url: echo.url, protocol: "ws" },
    connections: {
      count: 4,
      rate: 100,
      stages: [
        { duration: "2s", target: 4 },
        { duration: "2s", target: 2 },
      ],
    },
    scenario: { kind: "echo", message: { rate: 5, timeout: "1s" }, duration: "4s" },
  });
  runs.short = await startRun({
    name: "phone short — two connections echoing for two seconds",
    target: { url: echo.url, protocol: "ws" },
    connections: { count: 2, rate: 100 },
    scenario: { kind: "echo", message: { rate: 5 }, duration: "2s" },
  });
  runs.users = await startRun({
    name: "phone users — arrive, chat a little, leave",
    target: { url: echo.url, protocol: "ws" },
    connections: { count: 20 },
    scenario: { kind: "users", arrivalRate: 4, duration: "2s" },
    flow: {
      steps: [
        { connect: {} },
        { send: { name: "chat", json: { id: "{{ msg.id }}" }, reply: { match: { path: "$.id", equals: "{{ msg.id }}" } } } },
        { think: { min: "300ms", max: "400ms" } },
        { disconnect: true },
      ],
    },
  });
  // Nothing listens on port 9 (discard) here: every connect is refused at once and the run ends errored.
  runs.refused = await startRun({
    name: "phone refused",
    target: { url: "ws://127.0.0.1:9/", protocol: "ws", connectTimeout: "1s" },
    connections: { count: 2, rate: 100 },
    scenario: { kind: "echo", message: { rate: 5 }, duration: "2s" },
    sanity: false,
  });
  browser = await launchChromium();
  desktop = await openPage(browser, { width: 1440, height: 900 });
  await desktop.goto(`${stack.webUrl}/sign-up`);
  await signUp(desktop, { name: "Pat Phone", email: "pat@example.com" });
  await desktop.waitForURL((u) => !/sign-(up|in)/.test(u.pathname));
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
  await context.addCookies(await desktop.context().cookies());
  phone = await context.newPage();
  phone.setDefaultTimeout(30_000);
});
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await echo?.close();
});

const pages = () => [
  { name: "runs", path: "/", ready: ".runs-table" },
  { name: "run", path: `/runs/${runs.staged}`, ready: '[data-testid="agent-breakdown"]' },
  { name: "run-users", path: `/runs/${runs.users}`, ready: '[data-testid="percentile-spectrum"] .u-legend' },
  { name: "run-errored", path: `/runs/${runs.refused}`, ready: '[data-testid="run-summary"], [data-testid="charts-empty"]' },
  { name: "new-run", path: "/runs/new", ready: ".cm-editor" },
  { name: "plans", path: "/plans", ready: ".template-card" },
  { name: "plan", path: `/plans/${planId}`, ready: ".cm-editor" },
  { name: "compare", path: `/compare?runs=${runs.staged},${runs.short},${runs.users}`, ready: '[data-testid="compare-table"]' },
  { name: "agents", path: "/agents", ready: 'table[aria-label="Agents"]' },
  { name: "settings", path: "/settings/tokens", ready: ".settings-tabs" },
  { name: "api-docs", path: "/api-docs", ready: "h1" },
];

/** The document's width, and the outermost elements that reach past the window (what to fix when it is too wide). */
const pageWidth = (page: Page) =>
  page.evaluate((screen) => {
    // Not window.innerWidth: a phone's layout viewport grows to the content it is meant to catch.
    const past = (el: Element) => el.getBoundingClientRect().right > screen + 1;
    // Inside a box that scrolls or clips it, an element's width is that box's business.
    const clipped = (el: Element): boolean => {
      for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) if (getComputedStyle(a).overflowX !== "visible") return true;
      return false;
    };
    const culprits = Array.from(document.querySelectorAll("body *"))
      .filter((el) => past(el) && !clipped(el) && !(el.parentElement && past(el.parentElement) && !clipped(el.parentElement)))
      .slice(0, 5)
      .map((el) => `${el.tagName.toLowerCase()}.${el.className} (${Math.round(el.getBoundingClientRect().right)} px)`);
    return { width: document.documentElement.scrollWidth, culprits };
  }, page.viewportSize()!.width);

const NAV = ["Runs", "New run", "Plans", "Compare", "Agents", "Settings", "API"];

/** Every y axis of every chart on the page whose widest tick label is wider than the room beside the axis title. */
const crowdedAxes = (page: Page) =>
  page.evaluate(() =>
    Array.from(document.querySelectorAll<HTMLElement>(".uplot")).flatMap((chart) => {
      const title = chart.closest(".panel")?.querySelector("h2")?.textContent ?? "?";
      const axes = JSON.parse(chart.dataset.yAxes ?? "null") as { label: string; room: number; widest: number }[] | null;
      if (!axes) return [`${title}: no axis facts`];
      return axes.filter((a) => a.widest > a.room).map((a) => `${title}: "${a.label}" ticks ${a.widest} px in ${a.room} px`);
    }),
  );

/** Stage labels drawn outside their chart's plot area, and the labels drawn, per chart. */
const stageLabels = (page: Page) =>
  page.evaluate(() =>
    Array.from(document.querySelectorAll<HTMLElement>('[data-testid="run-charts"] .uplot')).map((chart) => {
      const canvas = chart.querySelector("canvas")!.getBoundingClientRect();
      const over = chart.querySelector(".u-over")!.getBoundingClientRect();
      const labels = JSON.parse(chart.dataset.regionLabels ?? "[]") as { label: string; x: number; maxWidth: number }[];
      return {
        drawn: labels.map((l) => l.label),
        outside: labels.filter((l) => canvas.left + l.x < over.left || canvas.left + l.x + l.maxWidth > over.right + 1).map((l) => l.label),
      };
    }),
  );

/** Text cut off in the headline cards: a title or figure wider than its box, or a box past its card. */
const clippedCards = (page: Page) =>
  page.evaluate(() =>
    Array.from(document.querySelectorAll<HTMLElement>(".headline-card")).flatMap((card) => {
      const box = card.getBoundingClientRect();
      return Array.from(card.querySelectorAll<HTMLElement>(".headline-label, .headline-value, .headline-detail"))
        .filter((el) => el.scrollWidth > el.clientWidth + 1 || el.getBoundingClientRect().right > box.right + 1)
        .map((el) => `${card.dataset.card}: ${el.textContent}`);
    }),
  );

describe.skipIf(!hasChromium)("phones and desktops in Chromium", () => {
  it("at 390 px no page is wider than the screen, and the menu reaches every page and Sign out", async () => {
    const wide: string[] = [];
    for (const p of pages()) {
      await phone.goto(`${stack.webUrl}${p.path}`);
      await phone.locator(p.ready).first().waitFor();
      // The API reference is long: its first screen shows the layout.
      if (p.name === "api-docs") await phone.screenshot({ path: `${ARTIFACTS}/phone-390-${p.name}.png` });
      else await screenshot(phone, `phone-390-${p.name}`);
      const w = await pageWidth(phone);
      if (w.width > 390) wide.push(`${p.name} is ${w.width} px wide: ${w.culprits.join(", ")}`);
    }
    expect(wide).toEqual([]);
    // The API reference (last page visited) shows `code` as code, parameters' included.
    const literal = (await phone.locator("main section.panel").allInnerTexts()).filter((t) => t.includes("`"));
    expect(literal.map((t) => t.slice(0, 120))).toEqual([]);

    // The nav folds behind a Menu button; open, every item is on screen.
    await phone.goto(`${stack.webUrl}/`);
    const menu = phone.getByRole("button", { name: "Menu" });
    expect(await phone.getByRole("link", { name: "Agents", exact: true }).isVisible()).toBe(false);
    await menu.click();
    expect(await menu.getAttribute("aria-expanded")).toBe("true");
    const nav = phone.getByRole("navigation", { name: "Main" });
    for (const item of [...NAV.map((name) => nav.getByRole("link", { name, exact: true })), nav.getByRole("button", { name: "Sign out" })]) {
      const box = await item.boundingBox();
      expect(box, await item.innerText()).not.toBeNull();
      expect(box!.x).toBeGreaterThanOrEqual(0);
      expect(box!.x + box!.width).toBeLessThanOrEqual(390);
      expect(box!.y + box!.height).toBeLessThanOrEqual(844);
    }
    await screenshot(phone, "phone-390-menu-open");
    await nav.getByRole("link", { name: "Agents", exact: true }).click();
    await phone.waitForURL(/\/agents$/);
    expect(await menu.getAttribute("aria-expanded")).toBe("false");
    expect(await nav.isVisible()).toBe(false);
  });

  it("at 1440 px no page is wider than the window, and the nav is one row with no menu button", async () => {
    const wide: string[] = [];
    for (const p of pages()) {
      await desktop.goto(`${stack.webUrl}${p.path}`);
      await desktop.locator(p.ready).first().waitFor();
      if (p.name !== "api-docs") await screenshot(desktop, `phone-1440-${p.name}`);
      const w = await pageWidth(desktop);
      if (w.width > 1440) wide.push(`${p.name} is ${w.width} px wide: ${w.culprits.join(", ")}`);
    }
    expect(wide).toEqual([]);
    // Three runs with names as long as the templates' side by side: the table fits its panel
    // (its column heads wrap) instead of scrolling sideways at a desktop's width.
    await desktop.goto(`${stack.webUrl}/compare?runs=${runs.staged},${runs.short},${runs.users}`);
    const compare = desktop.getByTestId("compare-table");
    await compare.waitFor();
    const fit = await compare.evaluate((t) => ({ table: t.scrollWidth, room: t.parentElement!.clientWidth }));
    expect(fit.table, JSON.stringify(fit)).toBeLessThanOrEqual(fit.room);
    expect(await desktop.getByRole("button", { name: "Menu" }).isVisible()).toBe(false);
    const tops = new Set<number>();
    for (const name of NAV) tops.add(Math.round((await desktop.getByRole("link", { name, exact: true }).boundingBox())!.y));
    expect(tops.size).toBe(1);
  });

  it("run pages at both widths: axis titles clear of their ticks, stage labels and card titles whole", async () => {
    for (const page of [desktop, phone]) {
      const width = page.viewportSize()!.width;
      await page.goto(`${stack.webUrl}/runs/${runs.staged}`);
      await page.locator('[data-testid="percentile-spectrum"] .uplot').waitFor();
      // An error-free run's "per second" axis ticks 0 … 1 by 0.25: they ran under its title.
      expect(await crowdedAxes(page), `at ${width} px`).toEqual([]);
      // Both stages are named on every timeline, inside the plot (the first starts before it).
      for (const chart of await stageLabels(page)) {
        expect(chart.drawn, `at ${width} px`).toEqual(["stage 1 → 4", "stage 2 → 2"]);
        expect(chart.outside, `at ${width} px`).toEqual([]);
      }
      expect(await clippedCards(page), `at ${width} px`).toEqual([]);
    }
    // A finished error-free run says "none", not "none so far"; the per-agent table names the agent.
    expect(await desktop.locator(".chart-panel h2", { hasText: "Errors and disconnects" }).innerText()).toBe("Errors and disconnects none");
    expect(await desktop.getByTestId("agent-breakdown").locator("tbody tr").first().innerText()).toMatch(/^e2e-agent\b/);
    // Off the chart the spectrum's legend reads the round trip's p99: the table's, not the first
    // HdrHistogram tick past 99 % (46.5 vs 34.9 ms once).
    await desktop.mouse.move(2, 2);
    const spectrumP99 = await desktop
      .locator('[data-testid="percentile-spectrum"] .u-legend .u-series', { hasText: "round trip" })
      .locator(".u-value")
      .innerText();
    const tableP99 = await desktop.getByTestId("latency-kinds").locator("tr", { hasText: "Round trip" }).locator("td").nth(5).innerText();
    expect(spectrumP99).toBe(tableP99);
  });

  it("a run that errored in its first second is drawn over that second, not on a 0–100 s axis", async () => {
    await desktop.goto(`${stack.webUrl}/runs/${runs.refused}`);
    await desktop.locator('[data-testid="run-charts"] .uplot').first().waitFor();
    const ranges = await desktop
      .locator('[data-testid="run-charts"] .uplot')
      .evaluateAll((charts) => charts.map((c) => JSON.parse((c as HTMLElement).dataset.xRange ?? "null") as [number, number] | null));
    // Refused at once: one measured second (two on a slow machine), never a hundred.
    expect(ranges).toHaveLength(4);
    for (const r of ranges) expect(r, JSON.stringify(ranges)).toEqual([0, 1]);
    await screenshot(desktop, "phone-1440-run-errored-charts");
  });

  it("a users run's spectrum leaves user time (seconds) out of its ms lines until asked", async () => {
    await desktop.goto(`${stack.webUrl}/runs/${runs.users}`);
    const legend = desktop.locator('[data-testid="percentile-spectrum"] .u-legend');
    await legend.waitFor();
    const userTime = legend.locator(".u-series", { hasText: "user time" });
    expect(await userTime.getAttribute("class")).toContain("u-off");
    expect(await legend.locator(".u-series", { hasText: "round trip" }).getAttribute("class")).not.toContain("u-off");
    await screenshot(desktop, "phone-1440-users-spectrum");
  });

  it("Stop asks first: dismissed, the run goes on; confirmed, it ends aborted", async () => {
    const res = await api<{ id: string }>(stack, "POST", "/api/v1/runs", {
      plan: {
        name: "phone stop",
        target: { url: echo.url, protocol: "ws" },
        connections: { count: 2, rate: 100 },
        scenario: { kind: "echo", message: { rate: 2 }, duration: "60s" },
      },
    });
    expect(res.status).toBe(201);
    const id = res.body.id;
    await phone.goto(`${stack.webUrl}/runs/${id}`);
    const stop = phone.getByRole("button", { name: "Stop run" });
    await stop.waitFor();
    const asked: string[] = [];
    phone.once("dialog", (d) => {
      asked.push(d.message());
      void d.dismiss();
    });
    await stop.click();
    await expect.poll(() => asked.length).toBe(1);
    expect(asked[0]).toMatch(/^Stop "phone stop"\?/);
    expect((await api<{ status: string }>(stack, "GET", `/api/v1/runs/${id}`)).body.status).toMatch(/queued|running/);
    phone.once("dialog", (d) => void d.accept());
    await stop.click();
    expect((await waitForFinal<{ status: string }>(stack, id, 30_000)).status).toBe("aborted");
  });

  it("signs out from the phone's menu", async () => {
    await phone.goto(`${stack.webUrl}/plans`);
    await phone.getByRole("button", { name: "Menu" }).click();
    await phone.getByRole("navigation", { name: "Main" }).getByRole("button", { name: "Sign out" }).click();
    await phone.waitForURL(/\/sign-in/);
  });
});
