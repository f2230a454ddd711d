import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS } from "@volley/contracts";
import { mergeEncoded } from "@volley/metrics";
import { startSockjsChat, type SockjsChatStats, type TestApp } from "@volley/targets";
import { runFlow as run } from "./flow-test-kit";
import { total } from "../engine/engine-test-kit";

const apps: TestApp<SockjsChatStats>[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});

describe("flows over SockJS: the app's own JSON in text frames", { timeout: 30_000 }, () => {
  // sockjs-node's broadcast chat, speaking its own JSON: a message comes back to its sender and to
  // every other session, each copy matched by the clientMsgId the message carried.
  it.each(["websocket", "xhr-streaming", "xhr-polling"] as const)("a chat room over %s: the server's counts are Volley's", async (transport) => {
    const app = await startSockjsChat();
    apps.push(app);
    const n = 3;
    const { frames, outcome } = await run({
      name: `sockjs chat (${transport})`,
      target: { url: app.url, protocol: "sockjs", connectTimeout: "5s", sockjs: { transports: [transport] } },
      connections: { count: n, rate: 1000 },
      scenario: { kind: "broadcast", room: "chat", echo: true, duration: "2s", message: { rate: 2, timeout: "5s" } },
      flow: {
        setup: [{ waitFor: { name: "welcome", match: { path: "$.type", equals: "welcome" } } }],
        messages: [
          {
            json: { type: "chat", text: "hello #{{ msg.seq }}", clientMsgId: "{{ msg.id }}" },
            reply: { match: { path: "$.clientMsgId", equals: "{{ msg.id }}" } },
          },
        ],
      },
    });
    expect(outcome.error ?? outcome.status).toBe("completed");
    const stats = app.stats();
    const sent = total(frames, COUNTERS.sent);
    const received = total(frames, COUNTERS.received);
    const deliveries = total(frames, COUNTERS.deliveriesReceived);
    expect(sent).toBeGreaterThanOrEqual(n * 3);
    expect(stats.sessions).toBe(n);
    // Every message reached the server as the app's own JSON (none rejected as not-chat)...
    expect(stats.rejected).toBe(0);
    expect(stats.messages).toBe(sent);
    // ...and every copy it wrote is Volley's: the sender's as the reply, the others' as deliveries.
    expect(received).toBe(sent);
    expect(received + deliveries).toBe(stats.delivered);
    expect(total(frames, COUNTERS.lost)).toBe(0);
    expect(total(frames, COUNTERS.deliveriesLost)).toBe(0);
    expect(total(frames, COUNTERS.deliveriesExpected)).toBe(deliveries);
    expect(total(frames, "errors.protocol")).toBe(0);
    expect(mergeEncoded(frames.flatMap((f) => f.histograms[HISTOGRAMS.messageLatency] ?? [])).totalCount).toBe(sent);
  });
});
