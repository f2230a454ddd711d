import { homedir, hostname } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { loadEnv } from "./env";
import { defaultWorkers } from "./workers/default-workers";

afterEach(() => vi.restoreAllMocks());

function failure(env: NodeJS.ProcessEnv): string {
  const lines: string[] = [];
  vi.spyOn(process.stderr, "write").mockImplementation((chunk) => (lines.push(String(chunk)), true));
  vi.spyOn(process, "exit").mockImplementation((code) => {
    throw new Error(`exit ${code}`);
  });
  expect(() => loadEnv(env)).toThrow("exit 1");
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

describe("agent env", () => {
  it("has working defaults", () => {
    expect(loadEnv({})).toEqual({
      HUB_URL: "http://127.0.0.1:3001",
      AGENT_NAME: hostname(),
      AGENT_POOL: "default",
      AGENT_MAX_CONNECTIONS: 50_000,
      AGENT_SOURCE_ADDRESSES: [],
      AGENT_WORKERS: defaultWorkers(),
      LOG_LEVEL: "info",
      AGENT_STATE_DIR: path.join(homedir(), ".volley", "agent"),
    });
    // Under systemd with StateDirectory= (the installer's unit), the identity lives there.
    expect(loadEnv({ STATE_DIRECTORY: "/var/lib/volley-agent" }).AGENT_STATE_DIR).toBe("/var/lib/volley-agent");
    expect(loadEnv({ STATE_DIRECTORY: "/var/lib/volley-agent", AGENT_STATE_DIR: "/srv/agent" }).AGENT_STATE_DIR).toBe("/srv/agent");
    expect(loadEnv({ HUB_URL: "https://hub.example.com/", AGENT_MAX_CONNECTIONS: "200", AGENT_NAME: "" })).toMatchObject({
      HUB_URL: "https://hub.example.com",
      AGENT_MAX_CONNECTIONS: 200,
      AGENT_NAME: hostname(),
    });
    expect(loadEnv({ AGENT_WORKERS: "0" }).AGENT_WORKERS).toBe(0);
    expect(loadEnv({ AGENT_WORKERS: "6" }).AGENT_WORKERS).toBe(6);
  });

  it("stops with one line naming the variable and the fix", () => {
    expect(failure({ AGENT_MAX_CONNECTIONS: "lots" })).toMatch(/^invalid environment variable AGENT_MAX_CONNECTIONS="lots": set it to a whole number/);
    expect(failure({ HUB_URL: "ftp://x" })).toMatch(/^invalid environment variable HUB_URL="ftp:\/\/x": set it to the hub's http\(s\) URL/);
    expect(failure({ AGENT_POOL: "My Pool" })).toMatch(/AGENT_POOL.*lowercase letters/);
    expect(failure({ AGENT_WORKERS: "two" })).toMatch(
      /^invalid environment variable AGENT_WORKERS="two": set it to a whole number of engine threads, e\.g\. 4 \(0: run on the main thread\)/,
    );
    expect(failure({ AGENT_WORKERS: "-1" })).toMatch(/AGENT_WORKERS="-1": set it to 0 or more engine threads/);
    expect(failure({ LOG_LEVEL: "loud" })).toMatch(/LOG_LEVEL.*use one of/);
    expect(failure({ AGENT_SOURCE_ADDRESSES: "127.0.0.2-127.0.0.x" })).toMatch(
      /^invalid environment variable AGENT_SOURCE_ADDRESSES="127.0.0.2-127.0.0.x": .*e\.g\. 127\.0\.0\.2-127\.0\.0\.9/,
    );
  });
});
