import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, planSchema } from "@volley/contracts";
import { summarizeRun } from "@volley/metrics";
import { startWsEchoServer, type EchoServer } from "@volley/targets";
import type { CloseInfo, Connection, Driver } from "../drivers/driver";
import { wsDriver } from "../drivers/ws-driver";
import { total } from "./engine-test-kit";
import { decodeMessage } from "./message-codec";
import { runShard } from "./run-shard";
import type { EngineFrame } from "./types";

const servers: EchoServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

/**
 * The ws driver, except that one connection (the `late`-th connect) is reported open `holdMs` after
 * the server put it in the room: meanwhile the server fans the other members' messages out to it,
 * though Volley, which counts a member in when its connect() resolves, sent them before it joined.
 * Copies that arrive early are held and handed over once the engine listens. Independently of the
 * engine, it numbers every message sent and marks each member's join in that order, and counts the
 * copies handed to members that joined after the copy's message was sent.
 */
class LateJoinDriver implements Driver {
  readonly protocol = "ws";
  private connects = 0;
  /** Messages sent so far, and each message's number ("connId:seq"). */
  private sends = 0;
  private readonly sendNo = new Map<string, number>();
  /** Copies of other members' messages handed to members that joined after the send, and the rest. */
  lateCopies = 0;
  timelyCopies = 0;
  /** Messages sent before the late member joined. */
  sentBeforeLateJoin = 0;

  constructor(
    private readonly late: number,
    private readonly holdMs: number,
  ) {}

  async connect(opts: Parameters<Driver["connect"]>[0]): Promise<Connection> {
    const inner = await wsDriver.connect(opts);
    const isLate = this.connects++ === this.late;
    const held: (Buffer | string)[] = [];
    let deliver: ((data: Buffer | string) => void) | undefined;
    let ownId = -1;
    let joinedAt = Infinity;
    inner.onMessage((data) => {
      if (deliver) deliver(data);
      else held.push(data);
    });
    const conn: Connection = {
      send: (payload) => {
        const m = typeof payload === "string" ? null : decodeMessage(payload);
        if (m) {
          ownId = m.connId;
          this.sendNo.set(`${m.connId}:${m.seq}`, this.sends++);
        }
        inner.send(payload);
      },
      onMessage: (cb) => {
        deliver = (data) => {
          const m = decodeMessage(data);
          if (m && m.connId !== ownId) {
            if (this.sendNo.get(`${m.connId}:${m.seq}`)! < joinedAt) this.lateCopies++;
            else this.timelyCopies++;
          }
          cb(data);
        };
        for (const data of held.splice(0)) deliver(data);
      },
      onClose: (cb: (info: CloseInfo) => void) => inner.onClose(cb),
      close: () => inner.close(),
    };
    if (isLate) {
      await new Promise((r) => setTimeout(r, this.holdMs));
      this.sentBeforeLateJoin = this.sends;
    }
    // The engine counts the member in right after this resolves, before any further send.
    joinedAt = this.sends;
    return conn;
  }
}

describe("late joiners in a room", () => {
  it("broadcast: copies of messages sent before a member joined are late-joiner copies, neither expected nor duplicates", async () => {
    const server = await startWsEchoServer();
    servers.push(server);
    const driver = new LateJoinDriver(2, 300);
    const frames: EngineFrame[] = [];
    const plan = planSchema.parse({
      name: "broadcast with a late joiner",
      target: { url: server.url, connectTimeout: "5s" },
      connections: { count: 3, rate: 1000 },
      scenario: { kind: "broadcast", message: { rate: 20, per: "connection", timeout: "5s" }, duration: "1s" },
    });
    const outcome = await runShard(plan, { startAt: Date.now() + 20, onFrame: (f) => frames.push(f), driver });
    expect(outcome.status).toBe("completed");

    // ~300 ms of two members at 20/s reached the late member before Volley counted it in.
    expect(driver.lateCopies).toBeGreaterThanOrEqual(6);
    expect(driver.sentBeforeLateJoin).toBeGreaterThanOrEqual(6);
    expect(total(frames, COUNTERS.deliveriesLateJoiner)).toBe(driver.lateCopies);
    // None of them is a duplicate, nor an expected delivery: the books balance on what was due.
    expect(total(frames, COUNTERS.deliveriesDuplicated)).toBe(0);
    const d = outcome.totals.deliveries!;
    expect(d.lost).toBe(0);
    expect(d.expected).toBe(d.received);
    expect(total(frames, COUNTERS.deliveriesReceived)).toBe(d.received);
    // Every copy a member got after its join was due and timed.
    expect(driver.timelyCopies).toBe(d.received);
    // Messages sent before the join were due to one other member at most; those after, to both.
    expect(d.expected).toBeLessThanOrEqual(2 * outcome.totals.sent - driver.sentBeforeLateJoin);

    const summary = summarizeRun(frames, []);
    expect(summary.deliveries).toMatchObject({ duplicated: 0, lateJoiner: driver.lateCopies, lost: 0, ratio: 100 });
  });
});
