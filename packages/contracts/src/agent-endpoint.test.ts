import { describe, expect, it } from "vitest";
import { agentEndpoint, hubRelayPath } from "./agent-endpoint";
import { agentVersionRefusal } from "./agent-protocol";

describe("agent endpoint", () => {
  it("keeps Socket.IO's default path for a hub URL without a path, and puts it under the path of one with", () => {
    expect(agentEndpoint("http://127.0.0.1:3001")).toEqual({ url: "http://127.0.0.1:3001/agent", path: "/socket.io" });
    expect(agentEndpoint("http://10.0.0.5:3000/hub")).toEqual({ url: "http://10.0.0.5:3000/agent", path: "/hub/socket.io" });
    expect(agentEndpoint("https://volley.example.com/hub/")).toEqual({ url: "https://volley.example.com/agent", path: "/hub/socket.io" });
  });

  it("relays only the gateway's Socket.IO path under /hub, with the prefix taken off", () => {
    expect(hubRelayPath("/hub/socket.io/?EIO=4&transport=websocket")).toBe("/socket.io/?EIO=4&transport=websocket");
    expect(hubRelayPath("/hub/metrics")).toBeNull();
    expect(hubRelayPath("/socket.io/?EIO=4")).toBeNull();
    expect(hubRelayPath("/hub/socket.io")).toBeNull();
    expect(hubRelayPath(undefined)).toBeNull();
  });
});

describe("agent version refusal", () => {
  it("accepts the minimum and anything newer, refuses older or unreadable versions in words that say how to upgrade", () => {
    expect(agentVersionRefusal("0.1.0", "0.1.0")).toBeNull();
    expect(agentVersionRefusal("0.1.1", "0.1.0")).toBeNull();
    expect(agentVersionRefusal("1.0.0", "0.9.9")).toBeNull();
    expect(agentVersionRefusal("0.2.0", "0.10.0")).toMatch(
      /agent version 0\.2\.0 is older than this hub accepts \(0\.10\.0 or newer\): upgrade it by running the install line/,
    );
    expect(agentVersionRefusal("0.0.9", "0.1.0")).not.toBeNull();
    expect(agentVersionRefusal("", "0.1.0")).toMatch(/agent version \(none\)/);
    expect(agentVersionRefusal("banana", "0.1.0")).not.toBeNull();
  });
});
