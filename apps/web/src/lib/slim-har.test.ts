import { readFileSync } from "node:fs";
import { importHar, planToYaml } from "@volley/plan-import";
import { describe, expect, it } from "vitest";
import { slimHar } from "./slim-har";

const FIXTURE = new URL("../../../../packages/plan-import/fixtures/socketio-chat.har", import.meta.url);

/** The committed Chromium recording, plus what a real page also loads: a script, an image, timings. */
function heavyHar(): string {
  const har = JSON.parse(readFileSync(FIXTURE, "utf8")) as { log: { entries: Record<string, unknown>[] } };
  const origin = new URL((har.log.entries[0]!.request as { url: string }).url).origin;
  const asset = (path: string, mimeType: string, text: string, encoding?: string) => ({
    startedDateTime: "2026-11-24T10:00:00.000Z",
    time: 12,
    _initiator: { type: "script", stack: { callFrames: Array.from({ length: 50 }, (_, i) => ({ functionName: `f${i}`, url: `${origin}/app.js` })) } },
    request: {
      method: "GET",
      url: `${origin}${path}`,
      headers: [{ name: "Accept", value: "*/*" }],
      cookies: [],
      queryString: [],
      headersSize: -1,
      bodySize: 0,
    },
    response: {
      status: 200,
      headers: [{ name: "Content-Type", value: mimeType }],
      cookies: [],
      content: { size: text.length, mimeType, text, ...(encoding ? { encoding } : {}) },
    },
    cache: {},
    timings: { send: 0, wait: 5, receive: 1 },
  });
  har.log.entries.unshift(asset("/app.js", "application/javascript", "x".repeat(400_000)), asset("/logo.png", "image/png", "A".repeat(300_000), "base64"));
  return JSON.stringify(har);
}

describe("slimHar", () => {
  it("keeps what the import reads: the plan and notes come out the same, the upload a fraction of the size", () => {
    const heavy = heavyHar();
    const slim = slimHar(heavy);
    expect(slim.length).toBeLessThan(heavy.length / 10);
    const before = importHar(heavy);
    const after = importHar(slim);
    expect(planToYaml(after.plan)).toBe(planToYaml(before.plan));
    expect(after.notes).toEqual(before.notes);
    expect(planToYaml(after.plan)).toContain("flow:");
  });

  it("keeps JSON and plain-text response bodies, drops scripts and images", () => {
    const slim = JSON.parse(slimHar(heavyHar())) as { log: { entries: { request: { url: string }; response?: { content?: { text?: string } } }[] } };
    const byPath = (p: string) => slim.log.entries.find((e) => e.request.url.endsWith(p));
    expect(byPath("/app.js")?.response?.content?.text).toBeUndefined();
    expect(byPath("/logo.png")?.response?.content?.text).toBeUndefined();
    expect(byPath("/login")?.response?.content?.text).toContain("token");
  });

  it("leaves text that is no HAR as it is, for the server to name the problem", () => {
    for (const text of ["not json", '{"entries": []}', "[1, 2]", "null"]) expect(slimHar(text)).toBe(text);
  });
});
