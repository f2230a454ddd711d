import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS, planSchema, type PlanInput } from "@volley/contracts";
import { mergeEncoded, summarizeRun } from "@volley/metrics";
import { startSocketioEchoServer, startSockjsEchoServer, startStompEchoServer, startWsEchoServer, type EchoServer } from "@volley/targets";
import { socketioDriver } from "../drivers/socketio-driver";
import { sockjsDriver } from "../drivers/sockjs-driver";
import { stompDriver } from "../drivers/stomp-driver";
import { wsDriver } from "../drivers/ws-driver";
import { runShard } from "./run-shard";
import { WatchedDriver } from "./scenario-test-kit";
import type { EngineFrame } from "./types";
import { total } from "./engine-test-kit";

const servers: EchoServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function serve(start: () => Promise<EchoServer>): Promise<EchoServer> {
  const s = await start();
  servers.push(s);
  return s;
}

const histogramCount = (frames: EngineFrame[], name: string) => mergeEncoded(frames.flatMap((f) => f.histograms[name] ?? [])).totalCount;

async function run(plan: PlanInput, driver: WatchedDriver, during?: () => void) {
  const frames: EngineFrame[] = [];
  const p = planSchema.parse(plan);
  const running = runShard(p, { startAt: Date.now() + 20, onFrame: (f) => frames.push(f), driver });
  during?.();
  const outcome = await running;
  return { outcome, frames, summary: summarizeRun(frames, []) };
}

describe("room scenarios", () => {
  it("broadcast over ws: every delivery of every message to the other 3 members, and the sender's echo", async () => {
    const server = await serve(() => startWsEchoServer());
    const driver = new WatchedDriver(wsDriver, 4);
    const { outcome, frames, summary } = await run(
      {
        name: "broadcast",
        target: { url: server.url, connectTimeout: "5s" },
        connections: { count: 4, rate: 1000 },
        scenario: { kind: "broadcast", message: { rate: 20, timeout: "5s" }, duration: "1s" },
      },
      driver,
    );
    expect(outcome.status).toBe("completed");
    const sent = outcome.totals.sent;
    expect(sent).toBeGreaterThanOrEqual(4 * 20);
    expect(outcome.totals.deliveries).toEqual({ expected: sent * 3, received: sent * 3, lost: 0, remote: 0 });
    // The sender's own copy is a round trip, not a delivery.
    expect(outcome.totals.received).toBe(sent);
    expect(outcome.totals.lost).toBe(0);

    expect(total(frames, COUNTERS.deliveriesExpected)).toBe(sent * 3);
    expect(total(frames, COUNTERS.deliveriesReceived)).toBe(sent * 3);
    expect(total(frames, COUNTERS.deliveriesLost)).toBe(0);
    expect(total(frames, "errors.protocol")).toBe(0);
    expect(histogramCount(frames, HISTOGRAMS.deliveryLatency)).toBe(sent * 3);
    expect(histogramCount(frames, HISTOGRAMS.messageLatency)).toBe(sent);
    // What the engine counted is what the connections really handed over.
    const handed = driver.connections.reduce((n, c) => n + c.forwardedDeliveries, 0);
    expect(handed).toBe(sent * 3);

    expect(summary.deliveries).toMatchObject({ expected: sent * 3, received: sent * 3, lost: 0, duplicated: 0, remote: 0, ratio: 100 });
    expect(summary.deliveries!.latency.count).toBe(sent * 3);
    expect(summary.timings!.delivery.count).toBe(sent * 3);
    expect(summary.messages.received).toBe(sent);
  });

  it("broadcast: a member that hangs and is then closed mid-run loses exactly the deliveries it never handed over", async () => {
    const server = await serve(() => startWsEchoServer());
    const driver = new WatchedDriver(wsDriver, 4);
    const timers: NodeJS.Timeout[] = [];
    const { outcome, frames, summary } = await run(
      {
        name: "broadcast with a leaver",
        target: { url: server.url, connectTimeout: "5s" },
        connections: { count: 4, rate: 1000 },
        scenario: { kind: "broadcast", message: { rate: 20, timeout: "5s" }, duration: "1500ms" },
      },
      driver,
      () => {
        // The member stops reading 400 ms in (its deliveries keep coming but never reach the
        // engine), and closes 300 ms later: what it still awaited then is lost, nothing else.
        timers.push(setTimeout(() => (driver.connections[3]!.swallowing = true), 420));
        timers.push(setTimeout(() => driver.connections[3]!.close(), 720));
      },
    );
    timers.forEach(clearTimeout);
    expect(outcome.status).toBe("completed");
    const leaver = driver.connections[3]!;
    expect(leaver.closed).toBe(true);

    const owed = driver.owedTo(leaver);
    const lostByLeaver = owed - leaver.forwardedDeliveries;
    // Swallowed for 300 ms at 3 senders × 20/s: some deliveries were certainly lost.
    expect(lostByLeaver).toBeGreaterThan(0);
    const d = outcome.totals.deliveries!;
    expect(d.lost).toBe(lostByLeaver);
    expect(d.expected).toBe(d.received + d.lost);
    // Every other member got everything: expected is what each was owed, exactly.
    const owedAll = driver.connections.reduce((n, c) => n + driver.owedTo(c), 0);
    expect(d.expected).toBe(owedAll);
    expect(total(frames, COUNTERS.deliveriesLost)).toBe(lostByLeaver);
    // Counted when it left, not at the 5 s timeout: in the interval of its close.
    const closeFrame = frames.find((f) => (f.counters[COUNTERS.connectionsClosed] ?? 0) > 0)!;
    expect(closeFrame.counters[COUNTERS.deliveriesLost]).toBe(lostByLeaver);
    // Its own messages still in flight when it stopped reading are lost round trips.
    expect(outcome.totals.lost).toBe(leaver.sent - leaver.forwardedEchoes);
    expect(summary.deliveries).toMatchObject({ expected: d.expected, received: d.received, lost: lostByLeaver });
    expect(summary.deliveries!.ratio).toBeLessThan(100);
  });

  it("broadcast over sockjs (room on the URL) and over STOMP without echo (room as a subscription)", async () => {
    const sockjs = await serve(() => startSockjsEchoServer());
    const stomp = await serve(() => startStompEchoServer());
    const cases: [PlanInput["target"], WatchedDriver, boolean][] = [
      [{ url: sockjs.url, protocol: "sockjs", connectTimeout: "5s", sockjs: { transports: ["websocket"] } }, new WatchedDriver(sockjsDriver, 3), true],
      // The STOMP target sends a room's message to the other subscribers only: nothing to time as a round trip.
      [{ url: stomp.url, protocol: "stomp", connectTimeout: "5s" }, new WatchedDriver(stompDriver, 3), false],
    ];
    for (const [target, driver, echo] of cases) {
      const { outcome, frames } = await run(
        {
          name: `broadcast ${target.protocol}`,
          target,
          connections: { count: 3, rate: 1000 },
          scenario: { kind: "broadcast", echo, message: { rate: 10, timeout: "5s" }, duration: "1s" },
        },
        driver,
      );
      expect(outcome.status).toBe("completed");
      const sent = outcome.totals.sent;
      expect(sent).toBeGreaterThanOrEqual(3 * 10);
      expect(outcome.totals.deliveries).toEqual({ expected: sent * 2, received: sent * 2, lost: 0, remote: 0 });
      expect(outcome.totals.received).toBe(echo ? sent : 0);
      expect(outcome.totals.lost).toBe(0);
      expect(total(frames, "errors.protocol")).toBe(0);
    }
  });

  it("groups over socket.io: fixed groups of 4, each message to the other 3 of its own group only", async () => {
    const server = await serve(() => startSocketioEchoServer());
    const driver = new WatchedDriver(socketioDriver, 8);
    const { outcome, frames, summary } = await run(
      {
        name: "groups",
        target: { url: server.url, protocol: "socketio", connectTimeout: "5s", socketio: { transports: ["websocket"] } },
        connections: { count: 8, rate: 1000 },
        scenario: { kind: "groups", size: 4, message: { rate: 10, timeout: "5s" }, duration: "1s" },
      },
      driver,
    );
    expect(outcome.status).toBe("completed");
    const sent = outcome.totals.sent;
    expect(sent).toBeGreaterThanOrEqual(8 * 10);
    expect(outcome.totals.deliveries).toEqual({ expected: sent * 3, received: sent * 3, lost: 0, remote: 0 });
    // The server hands senders their own copy too; groups do not time it, nor call it an error.
    expect(outcome.totals.received).toBe(0);
    expect(total(frames, "errors.protocol")).toBe(0);
    expect(histogramCount(frames, HISTOGRAMS.deliveryLatency)).toBe(sent * 3);
    for (const c of driver.connections) {
      const group = Math.floor(c.ownId / 4);
      expect([...c.senders].every((s) => Math.floor(s / 4) === group && s !== c.ownId)).toBe(true);
      expect(c.senders.size).toBe(3);
    }
    expect(summary.deliveries).toMatchObject({ expected: sent * 3, received: sent * 3, lost: 0, ratio: 100 });
  });
});
