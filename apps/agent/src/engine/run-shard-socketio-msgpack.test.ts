import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS } from "@volley/contracts";
import { type SocketioMsgpackGameStats, startSocketioMsgpackGame, type TestApp } from "@volley/targets";
import { histogramCount, runFlow as run } from "../flow/flow-test-kit";
import { total } from "./engine-test-kit";

const apps: TestApp<SocketioMsgpackGameStats>[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});

async function game(): Promise<TestApp<SocketioMsgpackGameStats>> {
  const app = await startSocketioMsgpackGame();
  apps.push(app);
  return app;
}

describe("runs over Socket.IO with socket.io-msgpack-parser (socketio.parser: msgpack)", { timeout: 30_000 }, () => {
  it("echo: every message through the server's own echo event, counted as the server counts it", async () => {
    const app = await game();
    const { frames, outcome } = await run({
      name: "socketio msgpack echo",
      target: { url: app.url, protocol: "socketio", connectTimeout: "5s", socketio: { parser: "msgpack", transports: ["websocket"], ack: true } },
      connections: { count: 4, rate: 100 },
      scenario: { kind: "echo", duration: "1s", message: { rate: 10, timeout: "3s" } },
    });
    expect(outcome.status).toBe("completed");
    const sent = outcome.totals.sent;
    expect(sent).toBeGreaterThanOrEqual(4 * 9);
    expect(outcome.totals).toMatchObject({ opened: 4, failed: 0, received: sent, lost: 0, duplicated: 0 });
    expect(histogramCount(frames, HISTOGRAMS.messageLatency)).toBe(sent);
    expect(app.stats()).toEqual({ connections: 4, echoes: sent, moves: 0, moved: 0, rejected: 0 });
  });

  it("a flow: the app's own move events as MessagePack maps, each reply matched by the id the server copies back", async () => {
    const app = await game();
    const { frames, outcome } = await run({
      name: "socketio msgpack flow",
      target: { url: app.url, protocol: "socketio", connectTimeout: "5s", socketio: { parser: "msgpack" } },
      connections: { count: 4, rate: 100 },
      scenario: { kind: "echo", duration: "1s", message: { rate: 10, timeout: "3s" } },
      flow: {
        setup: [
          { send: { name: "spawn", event: "move", json: { clientMoveId: "spawn-{{ conn.index }}", x: 0, y: 0 }, ack: true, capture: { tick: "$.tick" } } },
        ],
        messages: [
          {
            name: "move",
            event: "move",
            json: { clientMoveId: "{{ msg.id }}", x: "{{ msg.seq }}", y: "{{ vars.tick }}" },
            reply: { event: "moved", match: { path: "$.clientMoveId", equals: "{{ msg.id }}" } },
          },
        ],
      },
    });
    expect(outcome.status).toBe("completed");
    const sent = total(frames, COUNTERS.sent);
    expect(sent).toBeGreaterThanOrEqual(4 * 9);
    expect(total(frames, COUNTERS.received)).toBe(sent);
    expect(total(frames, COUNTERS.lost)).toBe(0);
    expect(total(frames, COUNTERS.unmatched)).toBe(0);
    expect(histogramCount(frames, "setup.spawn")).toBe(4);
    // x and y arrived as numbers (a string would be refused with move_error): the templates kept their types through MessagePack.
    expect(app.stats()).toEqual({ connections: 4, echoes: 0, moves: sent + 4, moved: sent + 4, rejected: 0 });
  });
});
