import { availableParallelism } from "node:os";
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
      STOMP_ECHO_PORT: 9004,
      HTTP_ECHO_PORT: 9005,
      SOCKETCLUSTER_ECHO_PORT: 9006,
      HTTP_CLUSTER_PORT: 9007,
      HTTP_CLUSTER_WORKERS: availableParallelism(),
      MQTT_BROKER_PORT: 9017,
      TARGETS_TEST_APPS: false,
      SOCKETIO_CHAT_PORT: 9010,
      JSONRPC_WS_PORT: 9011,
      GRAPHQL_WS_PORT: 9012,
      SOCKETCLUSTER_PINGPONG_PORT: 9013,
      SSE_NEWS_PORT: 9014,
      LONGPOLL_CHAT_PORT: 9015,
      STOMP_CHAT_PORT: 9016,
      ECHO_HOLD: "timer",
      LOG_LEVEL: "info",
    });
    expect(loadEnv({ WS_ECHO_PORT: "0" }).WS_ECHO_PORT).toBe(0);
    expect(loadEnv({ SOCKETIO_ECHO_PORT: "0", SOCKJS_ECHO_PORT: "" })).toMatchObject({ SOCKETIO_ECHO_PORT: 0, SOCKJS_ECHO_PORT: 9003 });
    expect(loadEnv({ HTTP_CLUSTER_WORKERS: "0" }).HTTP_CLUSTER_WORKERS).toBe(0);
    expect(loadEnv({ MQTT_BROKER_PORT: "0" }).MQTT_BROKER_PORT).toBe(0);
    expect(loadEnv({ ECHO_HOLD: "precise" }).ECHO_HOLD).toBe("precise");
    expect(loadEnv({ TARGETS_TEST_APPS: "1", SSE_NEWS_PORT: "0" })).toMatchObject({ TARGETS_TEST_APPS: true, SSE_NEWS_PORT: 0 });
  });

  it("stops with one line naming the variable and the fix", () => {
    const lines: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk) => (lines.push(String(chunk)), true));
    vi.spyOn(process, "exit").mockImplementation((code) => {
      throw new Error(`exit ${code}`);
    });
    expect(() => loadEnv({ WS_ECHO_PORT: "70000" })).toThrow("exit 1");
    expect(lines).toEqual(['invalid environment variable WS_ECHO_PORT="70000": set it to a port between 0 and 65535\n']);
    expect(() => loadEnv({ HTTP_CLUSTER_WORKERS: "1.5" })).toThrow("exit 1");
    expect(lines[1]).toContain("HTTP_CLUSTER_WORKERS");
    expect(() => loadEnv({ ECHO_HOLD: "exact" })).toThrow("exit 1");
    expect(lines[2]).toBe('invalid environment variable ECHO_HOLD="exact": set it to timer (whole-ms timers, the default) or precise (µs, costs CPU)\n');
    expect(() => loadEnv({ TARGETS_TEST_APPS: "yes" })).toThrow("exit 1");
    expect(lines[3]).toBe(
      'invalid environment variable TARGETS_TEST_APPS="yes": set it to 1 to also start the test apps (ports 9010-9016) or 0 to leave them off\n',
    );
  });
});
