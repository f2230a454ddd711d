import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Run } from "@volley/contracts";
import { startSocketioChat, type SocketioChatStats, type TestApp } from "@volley/targets";
import { api, startStack, waitForFinal, type Stack } from "./stack-fixture";

/**
 * A flow (issue 16) through the whole stack over two agents: the hub splits the CSV rows between
 * them, each connection logs in over HTTP, connects with its token, joins its room and probes a
 * room it is not in (the app answers chat_error: unmatched, sampled); the summary's flow section is
 * checked against the app's own counters, and the run page shows it (screenshot when Chromium is here).
 */
const CHROMIUM = "/usr/bin/chromium";
const ARTIFACTS = path.resolve(import.meta.dirname, "../artifacts");
const USERS = ["ann", "bob", "cid", "dee", "eve"];

let stack: Stack;
let app: TestApp<SocketioChatStats>;

beforeAll(async () => {
  app = await startSocketioChat();
  stack = await startStack({ agents: 2 });
});
afterAll(async () => {
  await stack?.stop();
  await app?.close();
});

const plan = (url: string) => ({
  name: "e2e chat flow",
  target: { url, protocol: "socketio" },
  connections: { count: 6, rate: 50 },
  scenario: { kind: "echo", duration: "3s", message: { rate: 2, timeout: "5s" } },
  agents: { count: 2 },
  thresholds: ["messages.unmatched < 100"],
  sanity: false,
  flow: {
    // The sixth row's empty user is refused by the app's login: that connection fails its setup.
    data: { csv: `user\n${USERS.join("\n")}\n""` },
    setup: [
      { request: { name: "login", method: "POST", url: "/login", json: { user: "{{ data.user }}" }, capture: { token: "$.token" } } },
      { connect: { auth: { token: "{{ vars.token }}" } } },
      { send: { name: "join", event: "join", json: { room: "room-{{ conn.index }}" } } },
      { waitFor: { name: "joined", event: "joined" } },
      { send: { name: "probe", event: "chat", json: { room: "<b>nowhere</b>", text: "probe" } } },
    ],
    messages: [
      {
        event: "chat",
        json: { room: "room-{{ conn.index }}", text: "hi {{ msg.seq }}", clientMsgId: "{{ msg.id }}" },
        reply: { event: "message", match: { path: "$.clientMsgId", equals: "{{ msg.id }}" } },
      },
    ],
  },
});

describe("a flow through web → hub → two agents → a Socket.IO chat app", () => {
  it("reports setup steps, events, unmatched messages with samples, and the run page shows them", async () => {
    const created = await api<{ id: string }>(stack, "POST", "/api/v1/runs", { plan: plan(app.url) });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const run = await waitForFinal<Run>(stack, created.body.id, 90_000);
    const s = run.summary!;
    const flow = s.flow!;
    const stats = app.stats();
    // Five logins succeeded, each with its own row (no row used twice across the two agents).
    expect(stats.logins).toBe(5);
    const step = (name: string) => flow.setup.find((x) => x.step === name);
    expect(step("login")).toMatchObject({ count: 5, failed: 1 });
    expect(s.errors["setup.login"]).toBe(1);
    expect(step("join")?.count).toBe(5);
    expect(step("joined")?.count).toBe(5);
    expect(stats.joins).toBe(5);
    // Every chat's copy came back as its reply; each probe drew one chat_error, unmatched and sampled.
    expect(s.messages.received).toBe(stats.chatsReceived);
    const events = Object.fromEntries(flow.events.map((e) => [e.event, e]));
    expect(events.message).toMatchObject({ received: stats.messagesDelivered, unmatched: 0 });
    expect(events.chat_error).toMatchObject({ received: 5, unmatched: 5 });
    expect(flow.unmatched).toBe(5);
    expect(flow.samples.filter((x) => x.event === "chat_error")).toHaveLength(5);
    expect(flow.samples[0]!.data).toContain('"room":"<b>nowhere</b>"');
    expect(s.thresholds.find((t) => t.expression === "messages.unmatched < 100")?.ok).toBe(true);

    if (!existsSync(CHROMIUM)) return console.warn(`flow-run.test: no screenshot — ${CHROMIUM} is missing`);
    const signUp = await fetch(`${stack.webUrl}/api/auth/sign-up/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: stack.webUrl },
      body: JSON.stringify({ email: "flow@example.com", password: "correct horse battery staple", name: "Flow" }),
    });
    expect(signUp.status).toBe(200);
    const cookie = signUp.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu"], headless: true });
    try {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, extraHTTPHeaders: { cookie } });
      const page = await context.newPage();
      await page.goto(`${stack.webUrl}/runs/${run.id}`);
      await page.getByTestId("flow-summary").waitFor();
      const setup = await page.getByTestId("flow-setup").innerText();
      expect(setup).toMatch(/login\s+5\s+1/);
      // In the plan's order.
      expect(setup).toMatch(/login[\s\S]*join\s[\s\S]*joined[\s\S]*probe/);
      expect(await page.getByTestId("flow-events").innerText()).toMatch(/chat_error\s+5\s+5/);
      // The sample is the server's text, shown as text: its markup is not rendered.
      expect(await page.getByTestId("flow-samples").innerText()).toContain("<b>nowhere</b>");
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.getByTestId("flow-summary").screenshot({ path: path.join(ARTIFACTS, "flow-run.png") });
    } finally {
      await browser.close();
    }
  });
});
