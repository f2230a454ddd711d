import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Run } from "@volley/contracts";
import { startWsEchoServer } from "@volley/targets";
import { api, startStack, waitForFinal, type Stack } from "./stack-fixture";

const ECHO_DELAY_MS = 20;

let stack: Stack;
let target: Awaited<ReturnType<typeof startWsEchoServer>>;

beforeAll(async () => {
  target = await startWsEchoServer({ port: 0, delayMs: ECHO_DELAY_MS });
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
  await target?.close();
});

const plan = (url: string, overrides: Record<string, unknown> = {}) => ({
  name: "e2e echo",
  target: { url, protocol: "ws" },
  connections: { count: 20, rate: 40 },
  scenario: { kind: "echo", message: { bytes: 64, rate: 10 }, duration: "4s", warmup: "1s" },
  thresholds: ["latency.p95 < 500ms", "errors.rate < 1%"],
  ...overrides,
});

describe("one plan from the API to the stored summary", () => {
  it("runs a plan through web → queue → hub → agent → target → stream → PostgreSQL and reports true latency", async () => {
    const created = await api<{ id: string }>(stack, "POST", "/api/v1/runs", { plan: plan(target.url) });
    expect(created.status).toBe(201);
    const run = await waitForFinal<Run>(stack, created.body.id, 90_000);
    expect(run.status, `${run.reason}\n${stack.output.slice(-30).join("\n")}`).toBe("passed");
    const s = run.summary!;
    // 20 connections × 10/s over the 4 s after each opened, open-loop: every message sent is answered.
    expect(s.messages.sent).toBeGreaterThanOrEqual(700);
    expect(s.messages.received).toBe(s.messages.sent);
    // The target holds every echo exactly ECHO_DELAY_MS: no message can come back sooner, and the
    // median sits just above it (loose bound: CI machines pause processes for tens of ms at times).
    expect(s.latency.min).toBeGreaterThanOrEqual(ECHO_DELAY_MS - 0.05); // one HdrHistogram bucket
    expect(s.latency.p50).toBeGreaterThanOrEqual(ECHO_DELAY_MS);
    // Judged only when the agent reports it was undisturbed; otherwise it must have said so.
    if (s.intervals.saturated === 0 && (s.sendLag.p99 ?? 0) < 30) expect(s.latency.p50).toBeLessThan(ECHO_DELAY_MS + 25);
    else expect(s.intervals.saturated > 0 || (s.sendLag.p99 ?? 0) >= 30).toBe(true);
    expect(s.latency.p99).not.toBeNull();

    const intervals = await api<{ intervals: Array<{ sent: number; p50: number | null }> }>(stack, "GET", `/api/v1/runs/${run.id}/intervals`);
    expect(intervals.status).toBe(200);
    expect(intervals.body.intervals.length).toBeGreaterThanOrEqual(4);
    expect(intervals.body.intervals.reduce((n, p) => n + p.sent, 0)).toBe(s.messages.sent);
  });

  it("ends a run against a target that refuses connections as errored with the reason, promptly", async () => {
    const started = Date.now();
    const created = await api<{ id: string }>(stack, "POST", "/api/v1/runs", { plan: plan("ws://127.0.0.1:9/echo") });
    expect(created.status).toBe(201);
    const run = await waitForFinal<Run>(stack, created.body.id, 60_000);
    expect(run.status).toBe("errored");
    expect(run.reason).toMatch(/refused/i);
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it("answers an invalid plan with 400 naming every offending field", async () => {
    const bad = plan("ftp://nowhere", { connections: { count: 0 } });
    const res = await api<{ error: { code: string; message: string } }>(stack, "POST", "/api/v1/runs", { plan: bad });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain("plan.target.url");
    expect(res.body.error.message).toContain("plan.connections.count");
  });
});

describe("accounts and API tokens through the real web", () => {
  it("answers API calls without credentials with 401 and the fix", async () => {
    const res = await api<{ error: { code: string; message: string } }>(stack, "GET", "/api/v1/runs", undefined, null);
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe("unauthenticated");
    expect(res.body.error.message).toMatch(/Authorization: Bearer/);
  });

  it("sends a fresh install's first visitor to sign-up, and a signed-up owner sees the org's runs and tokens", async () => {
    // A page that redirects before streaming answers 307; once streaming started Next redirects in the HTML.
    const redirectTarget = async (res: Response) => res.headers.get("location") ?? /url=([^"]+)"/.exec(await res.text())?.[1] ?? null;
    const anonymous = await fetch(`${stack.webUrl}/`, { redirect: "manual" });
    expect(await redirectTarget(anonymous)).toMatch(/\/sign-up$/);
    const signUpPage = await fetch(`${stack.webUrl}/sign-up`);
    expect(signUpPage.status).toBe(200);
    expect(await signUpPage.text()).toContain("the first account becomes the owner");

    const signUp = await fetch(`${stack.webUrl}/api/auth/sign-up/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: stack.webUrl },
      body: JSON.stringify({ email: "owner@example.com", password: "correct horse battery staple", name: "Owner" }),
    });
    expect(signUp.status, await signUp.clone().text()).toBe(200);
    const cookie = signUp.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
    expect(cookie).toContain("session_token");

    const home = await fetch(`${stack.webUrl}/`, { headers: { cookie } });
    expect(home.status).toBe(200);
    expect(await home.text()).toContain("e2e echo"); // the default org's runs from the tests above
    const tokens = await fetch(`${stack.webUrl}/settings/tokens`, { headers: { cookie } });
    expect(tokens.status).toBe(200);
    expect(await tokens.text()).toContain(stack.token.slice(0, 10)); // the e2e token's prefix
    const viaSession = await fetch(`${stack.webUrl}/api/v1/tokens`, { headers: { cookie } });
    expect(viaSession.status).toBe(200);

    // Once someone has an account, anonymous visitors go to sign-in.
    expect(await redirectTarget(await fetch(`${stack.webUrl}/runs/new`, { redirect: "manual" }))).toMatch(/\/sign-in$/);
  });
});
