import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PlanRecord } from "@volley/contracts";
import { startStack, type Stack } from "./stack-fixture";
import { chromiumInstalled, launchChromium, openPage, screenshot, signUp } from "./support/browser";

/**
 * Plans → Import in a real browser: a file that is no recording is refused with the reason, then
 * the committed Chromium recording of the Socket.IO chat (packages/plan-import/fixtures) imports
 * into the editor with the importer's notes above it, pointed at another server, and saves as a
 * plan with its flow; an Artillery script with its payload CSV imports with the rows as flow data.
 * Screenshots go to e2e/artifacts/import-*.png.
 */
const HAR = path.resolve(import.meta.dirname, "../../packages/plan-import/fixtures/socketio-chat.har");
const ARTILLERY = path.resolve(import.meta.dirname, "../../packages/plan-import/fixtures/artillery");
const TARGET = "http://127.0.0.1:9310";

const hasChromium = chromiumInstalled("import-browser.test");

let stack: Stack;
let browser: Browser;
let page: Page;

const shot = (name: string) => screenshot(page, name);

beforeAll(async () => {
  if (!hasChromium) return;
  stack = await startStack();
  browser = await launchChromium();
  page = await openPage(browser, { width: 1280, height: 800 });
  // Signed up once here, so a retried test starts signed in.
  await page.goto(`${stack.webUrl}/sign-up`);
  await signUp(page, { name: "Ida Importer", email: "ida@example.com" });
  await page.waitForURL(`${stack.webUrl}/`);
});
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

describe.skipIf(!hasChromium)("importing a plan in Chromium", () => {
  it("refuses a file that is no recording with the reason, imports a HAR into the editor with its notes, and saves it", async () => {
    await page.goto(`${stack.webUrl}/plans`);
    await page.locator('[data-import="plan"]').waitFor();
    await shot("import-01-plans");
    await page.getByRole("link", { name: "Import", exact: true }).click();
    await page.waitForURL(/\/plans\/import$/);
    await page.getByText("Save all as HAR with content").waitFor();

    // A HAR with no WebSocket messages in it: the server's reason is shown, naming the file.
    await page
      .getByLabel(/^File/)
      .setInputFiles({ name: "empty.har", mimeType: "application/json", buffer: Buffer.from(JSON.stringify({ log: { entries: [] } })) });
    await page.getByRole("button", { name: "Import", exact: true }).click();
    const refusal = page.locator(".import-error");
    await expect.poll(() => refusal.innerText()).toMatch(/empty\.har could not be imported[\s\S]*empty\.har: .*no WebSocket entry/);
    await shot("import-02-refused");

    await page.getByLabel(/^File/).setInputFiles(HAR);
    await expect.poll(() => page.getByLabel("Format").inputValue()).toBe("har");
    await page.getByLabel(/^Target URL/).fill(TARGET);
    await page.getByRole("button", { name: "Import", exact: true }).click();
    const notes = page.getByTestId("import-notes");
    await notes.waitFor();
    expect(await notes.innerText()).toMatch(/set the load you want to test/);
    await page.getByText("Plan is valid").waitFor();
    await page.getByTestId("flow-steps").waitFor();
    const yaml = await page.getByTestId("plan-yaml").innerText();
    expect(yaml).toContain("flow:");
    expect(yaml).toContain(TARGET);
    await shot("import-03-imported");

    await page.getByRole("button", { name: "Save plan" }).click();
    await page.waitForURL(/\/plans\/pln_/);
    const id = page.url().split("/plans/")[1]!;
    const saved = (await (await page.request.get(`${stack.webUrl}/api/v1/plans/${id}`)).json()) as PlanRecord;
    expect(saved.plan.target.protocol).toBe("socketio");
    expect(saved.plan.target.url).toBe(`${TARGET}/`); // the recorded Socket.IO path on the given origin
    expect(saved.plan.flow?.setup?.map((s) => Object.keys(s)[0])).toEqual(["request", "connect", "send", "waitFor"]);
    expect(saved.plan.flow?.messages?.map((m) => m.event)).toEqual(["chat"]);
    await page.getByRole("heading", { name: saved.name }).waitFor();
    await shot("import-04-saved");
  });

  it("imports an Artillery script with its payload CSV: the rows become the flow's data", async () => {
    await page.goto(`${stack.webUrl}/plans/import`);
    await page.getByLabel(/^File/).setInputFiles(path.join(ARTILLERY, "socketio-chat.yml"));
    await expect.poll(() => page.getByLabel("Format").inputValue()).toBe("artillery");
    await page.getByLabel(/^Payload CSV files/).setInputFiles(path.join(ARTILLERY, "users.csv"));
    await page.getByRole("button", { name: "Import", exact: true }).click();
    await page.getByTestId("import-notes").waitFor();
    expect(await page.getByTestId("import-notes").innerText()).toMatch(/payload rows go to connections in order/);
    await page.getByText("Plan is valid").waitFor();
    expect(await page.getByTestId("plan-yaml").innerText()).toContain("username,password");
    expect(await page.getByTestId("flow-steps").innerText()).toMatch(/Data: 3 rows \(CSV\)/);
    await shot("import-05-artillery");
  });
});
