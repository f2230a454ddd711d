import { io } from "socket.io-client";
import { describe, expect, it } from "vitest";
import { AGENT_EVENTS, AGENT_NAMESPACE, welcomeSchema } from "@volley/contracts";
import { ScriptedAgent } from "../test-support/scripted-agent";
import { useHubHarness } from "../test-support/use-hub-harness";

// A hub in hosted mode (VOLLEY_MODE=hosted) tells each agent so in its welcome: the agent then
// refuses non-public target addresses at connect time (apps/agent's engine and drivers).

const h = useHubHarness({ mode: "hosted" });

describe("hosted hub", () => {
  it("sends targetPolicy { mode: hosted } in every agent's welcome", async () => {
    const hello = ScriptedAgent.hello({ hubUrl: h.hubUrl, name: "policy-agent" });
    const socket = io(`${h.hubUrl}${AGENT_NAMESPACE}`, { auth: hello, transports: ["websocket"], reconnection: false, timeout: 5000 });
    try {
      const welcome = await new Promise<unknown>((resolve, reject) => {
        socket.once(AGENT_EVENTS.welcome, resolve);
        socket.once("connect_error", reject);
        setTimeout(() => reject(new Error("no welcome within 5 s")), 5000);
      });
      expect(welcomeSchema.parse(welcome)).toMatchObject({ agentId: expect.any(String), targetPolicy: { mode: "hosted" } });
    } finally {
      socket.close();
    }
  });
});
