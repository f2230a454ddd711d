import { afterEach, describe, expect, it, vi } from "vitest";
import { loadEnv } from "./env";

afterEach(() => vi.restoreAllMocks());

describe("targets env", () => {
  it("has working defaults", () => {
    expect(loadEnv({})).toEqual({
      TARGETS_HOST: "127.0.0.1",
      WS_ECHO_PORT: 9001,
      SOCKETIO_ECHO_PORT: 9002,
      SOCKJS_ECHO_PORT: 9003,
      SOCKETCLUSTER_ECHO_PORT: 9006,
      LOG_LEVEL: "info",
    });
    expect(loadEnv({ WS_ECHO_PORT: "0" }).WS_ECHO_PORT).toBe(0);
    expect(loadEnv({ SOCKETIO_ECHO_PORT: "0", SOCKJS_ECHO_PORT: "" })).toMatchObject({ SOCKETIO_ECHO_PORT: 0, SOCKJS_ECHO_PORT: 9003 });
  });

  it("stops with one line naming the variable and the fix", () => {
    const lines: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk) => (lines.push(String(chunk)), true));
    vi.spyOn(process, "exit").mockImplementation((code) => {
      throw new Error(`exit ${code}`);
    });
    expect(() => loadEnv({ WS_ECHO_PORT: "70000" })).toThrow("exit 1");
    expect(lines).toEqual(['invalid environment variable WS_ECHO_PORT="70000": set it to a port between 0 and 65535\n']);
  });
});
