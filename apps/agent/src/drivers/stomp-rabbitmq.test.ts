import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { COUNTERS, planSchema, type PlanInput } from "@volley/contracts";
import { runShard } from "../engine/run-shard";
import { total } from "../engine/engine-test-kit";
import type { EngineFrame } from "../engine/types";
import { reachable } from "./driver-test-kit";

/** RabbitMQ's Web-STOMP plugin, which carries text WebSocket frames only (its default). */
const BROKER = process.env.VOLLEY_TEST_WEB_STOMP_URL ?? "ws://127.0.0.1:15674/ws";

const up = await reachable(BROKER);
if (!up) console.warn(`stomp-rabbitmq: skipped — RabbitMQ Web-STOMP not reachable at ${BROKER} (enable it: rabbitmq-plugins enable rabbitmq_web_stomp)`);

async function broadcast(bodies: "binary" | "text"): Promise<EngineFrame[]> {
  const frames: EngineFrame[] = [];
  const plan: PlanInput = {
    name: `rabbitmq ${bodies}`,
    target: { url: BROKER, protocol: "stomp", connectTimeout: "5s", stomp: { login: "guest", passcode: "guest", host: "/", bodies } },
    connections: { count: 3, rate: 1000 },
    scenario: { kind: "broadcast", room: `volley-${randomUUID().slice(0, 8)}`, duration: "1s", message: { rate: 2, timeout: "3s" } },
    sanity: false,
  };
  await runShard(planSchema.parse(plan), { startAt: Date.now() + 20, onFrame: (f) => frames.push(f) });
  return frames;
}

describe.skipIf(!up)("Volley's own messages through RabbitMQ Web-STOMP", { timeout: 30_000 }, () => {
  it("stomp.bodies text: base64 text bodies reach every member of the room's topic", async () => {
    const frames = await broadcast("text");
    const sent = total(frames, COUNTERS.sent);
    expect(sent).toBeGreaterThan(0);
    expect(total(frames, COUNTERS.connectionsDropped)).toBe(0);
    expect(total(frames, COUNTERS.deliveriesReceived)).toBe(total(frames, COUNTERS.deliveriesExpected));
    expect(total(frames, COUNTERS.deliveriesReceived)).toBeGreaterThan(0);
    expect(total(frames, COUNTERS.deliveriesLost)).toBe(0);
    expect(total(frames, "errors.protocol")).toBe(0);
  });

  it("binary bodies (the default) are what a text-only broker cannot carry: the fix is stomp.bodies text", async () => {
    const frames = await broadcast("binary");
    expect(total(frames, COUNTERS.sent)).toBeGreaterThan(0);
    expect(total(frames, COUNTERS.connectionsDropped)).toBeGreaterThan(0);
    expect(total(frames, COUNTERS.deliveriesReceived)).toBe(0);
  });
});
