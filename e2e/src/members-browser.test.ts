import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Stack } from "./stack-fixture";
import { chromiumInstalled, launchChromium, screenshot, signUp } from "./support/browser";

/**
 * Settings → Members in a real browser: an owner invites a colleague as viewer, copies the link,
 * the colleague opens it signed out, creates an account, comes back and joins; the owner then
 * sees them, changes their role and removes them. Screenshots go to e2e/artifacts/.
 */
const PASSWORD = "correct horse battery staple";

const hasChromium = chromiumInstalled("members-browser.test");

let stack: Stack;
let browser: Browser;
const contexts: BrowserContext[] = [];

async function newPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  contexts.push(context);
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  return page;
}

beforeAll(async () => {
  if (!hasChromium) return;
  stack = await startStack();
  browser = await launchChromium();
});
afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await browser?.close();
  await stack?.stop();
});

describe.skipIf(!hasChromium)("members and invitations in the browser", () => {
  it("invites by link, the invitee signs up and joins as viewer, and the owner changes and removes them", async () => {
    const owner = await newPage();
    await owner.goto(`${stack.webUrl}/sign-up`);
    await signUp(owner, { name: "Olive Owner", email: "olive@example.com", password: PASSWORD });
    await owner.waitForURL(`${stack.webUrl}/`);

    await owner.goto(`${stack.webUrl}/settings/tokens`);
    await owner.getByRole("link", { name: "Members" }).click();
    await owner.waitForURL(/\/settings\/members$/);
    await expect.poll(() => owner.getByText("No email is sent").count()).toBe(1);
    await owner.getByLabel("Email").fill("vic@example.com");
    await owner.locator(`select[name="role"]`).selectOption("viewer");
    await owner.getByRole("button", { name: "Create invitation" }).click();
    const linkField = owner.getByTestId("new-invitation-link");
    await expect.poll(() => linkField.inputValue()).toMatch(/\/accept-invitation\/inv_[a-z0-9]{16}$/);
    const link = await linkField.inputValue();
    expect(link.startsWith(stack.webUrl)).toBe(true);
    await expect.poll(() => owner.getByRole("row", { name: /vic@example\.com/ }).count()).toBe(1); // pending list
    await screenshot(owner, "members-invited");

    const invitee = await newPage();
    await invitee.goto(link);
    await invitee.getByRole("link", { name: "create an account" }).click();
    await signUp(invitee, { name: "Vic Viewer", email: "vic@example.com", password: PASSWORD });
    await invitee.waitForURL(link);
    await expect.poll(() => invitee.getByText("olive@example.com invited").count()).toBe(1);
    await screenshot(invitee, "members-accept");
    await invitee.getByRole("button", { name: /^Join / }).click();
    await invitee.waitForURL(`${stack.webUrl}/`);

    await owner.reload();
    const role = owner.getByLabel("Role of vic@example.com");
    await expect.poll(() => role.inputValue()).toBe("viewer");
    expect(await owner.getByText("Pending invitations").count()).toBe(1);
    expect(await owner.getByRole("row", { name: /vic@example\.com.*Cancel/ }).count()).toBe(0);
    // A viewer sees the members page read-only.
    await invitee.goto(`${stack.webUrl}/settings/members`);
    await expect.poll(() => invitee.getByText("Your role is viewer").count()).toBe(1);
    expect(await invitee.getByRole("button", { name: "Create invitation" }).count()).toBe(0);

    await role.selectOption("member");
    await expect.poll(async () => (await owner.reload(), await owner.getByLabel("Role of vic@example.com").inputValue())).toBe("member");
    owner.once("dialog", (d) => void d.accept());
    await owner
      .getByRole("row", { name: /vic@example\.com/ })
      .getByRole("button", { name: "Remove" })
      .click();
    await expect.poll(() => owner.getByLabel("Role of vic@example.com").count()).toBe(0);
    await screenshot(owner, "members-removed");
  });
});
