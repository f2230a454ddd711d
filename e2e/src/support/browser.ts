import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { CHROMIUM_FLAGS, CHROMIUM_PATH as CHROMIUM } from "@volley/devstack";
import { chromium, type Browser, type Page } from "playwright-core";

/**
 * The browser tests' Chromium: Debian's, driven by playwright-core (no downloaded browser), and
 * the sign-up form each test starts from. Screenshots go to e2e/artifacts/ (CI keeps them).
 */
export const ARTIFACTS = path.resolve(import.meta.dirname, "../../artifacts");

/** Whether Chromium is installed; without it the named test is skipped, and says why. */
export function chromiumInstalled(test: string): boolean {
  const found = existsSync(CHROMIUM);
  if (!found) console.warn(`${test}: skipped — ${CHROMIUM} is missing (apt-get install -y chromium; .ci/run installs it)`);
  return found;
}

/** Headless Chromium, with e2e/artifacts/ made for its screenshots. */
export async function launchChromium(): Promise<Browser> {
  mkdirSync(ARTIFACTS, { recursive: true });
  return chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_FLAGS], headless: true });
}

/**
 * Headless Chromium on another host: started through `prefix` (e.g. `ip netns exec <ns>`), which
 * execs it in place, so playwright's pipe to it (file descriptors 3 and 4) survives.
 */
export async function launchChromiumIn(prefix: string[], workDir: string): Promise<Browser> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const wrapper = path.join(workDir, "chromium-on-host");
  const quoted = [...prefix, CHROMIUM].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(" ");
  writeFileSync(wrapper, `#!/bin/sh\nexec ${quoted} "$@"\n`, { mode: 0o755 });
  return chromium.launch({ executablePath: wrapper, args: [...CHROMIUM_FLAGS], headless: true });
}

/** A page at this viewport whose steps wait up to 30 s. */
export async function openPage(browser: Browser, viewport: { width: number; height: number }): Promise<Page> {
  const page = await browser.newPage({ viewport });
  page.setDefaultTimeout(30_000);
  return page;
}

/** A full-page screenshot as e2e/artifacts/<name>.png. */
export function screenshot(page: Page, name: string): Promise<Buffer> {
  return page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

export interface Person {
  name: string;
  email: string;
  /** "correct horse battery" unless given. */
  password?: string;
}

/** Fills the sign-up form the page shows (Name, Email, Password), not yet submitted. */
export async function fillSignUp(page: Page, person: Person): Promise<void> {
  await page.getByLabel("Name").fill(person.name);
  await page.getByLabel("Email").fill(person.email);
  await page.getByLabel("Password").fill(person.password ?? "correct horse battery");
}

/** Signs up with the form the page shows; where the app goes next (home, an invitation) is the caller's to wait for. */
export async function signUp(page: Page, person: Person): Promise<void> {
  await fillSignUp(page, person);
  await page.getByRole("button", { name: "Create account" }).click();
}
