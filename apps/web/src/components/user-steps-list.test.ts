import { planSchema } from "@volley/contracts";
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { UserStepsList } from "./user-steps-list";

describe("a users plan's steps", () => {
  it("say which connection each step opens or uses when a user holds several, and leave single-connection steps as they were", () => {
    const plan = planSchema.parse({
      name: "chat users",
      target: { url: "ws://127.0.0.1:8080/ws", protocol: "ws" },
      connections: { count: 10 },
      scenario: { kind: "users", arrivalRate: 1, duration: "5s" },
      flow: {
        steps: [
          { connect: {} },
          { connect: { connection: "feed", protocol: "sse", url: "/api/rooms/r1/events", reconnect: { policy: "immediate" } } },
          { waitFor: { name: "seen", connection: "feed", event: "message" } },
          { send: { name: "history", json: { type: "history" } } },
          { disconnect: { connection: "feed" } },
        ],
      },
    });
    const html = renderToStaticMarkup(createElement(UserStepsList, { steps: plan.flow!.steps! }));
    expect(html).toContain(">opens feed<");
    expect(html).toContain("sse /api/rooms/r1/events, reconnects (immediate");
    expect(html).toContain(">on feed<");
    expect(html).toContain("connections.opened.feed");
    // The first connect and the send name no connection: nothing is added to them.
    expect(html.match(/>(opens|on) feed</g)).toHaveLength(3);
  });
});
