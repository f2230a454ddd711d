import { describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS, planSchema, type Plan } from "@volley/contracts";
import { IntervalRecorder } from "./interval-recorder";
import { analyzeFrames } from "./run-analysis";
import { summarizeRun } from "./summarize-run";
import { RunTally, type TallyFrame } from "./run-tally";

/** A small deterministic PRNG, so a failing case can be replayed. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return s / 2 ** 32;
  };
}

type Kind = "echo" | "sweep" | "broadcast" | "flow" | "storm";

/** Frames like agents send them: several agents, warm-up, a silent gap, saturation, partial last intervals. */
function frames(kind: Kind, seed: number): TallyFrame[] {
  const rand = rng(seed);
  const out: TallyFrame[] = [];
  const agents = 4;
  for (let a = 0; a < agents; a++) {
    const last = 12 - (a === 3 ? 2 : 0);
    for (let index = a === 2 ? 1 : 0; index <= last; index++) {
      if (a === 1 && index === 6) continue; // a silent second
      const r = new IntervalRecorder();
      const n = 5 + Math.floor(rand() * 40);
      r.increment(COUNTERS.sent, n);
      r.increment(COUNTERS.received, n - (index % 5 === 0 ? 1 : 0));
      r.increment(COUNTERS.lost, index % 5 === 0 ? 1 : 0);
      r.increment(COUNTERS.connectionsDropped, index === 7 && a === 0 ? 2 : 0);
      r.increment(COUNTERS.connectionsActive, 10);
      if (index === 0) {
        r.increment(COUNTERS.connectionsOpened, 10);
        for (let i = 0; i < 10; i++) r.recordMicros(index % 2 ? HISTOGRAMS.wsConnect : HISTOGRAMS.connect, 2000 + rand() * 90_000);
        r.recordMicros(HISTOGRAMS.wsConnect, 5000);
      }
      const samples: Array<{ event: string; data: string; kind?: "error" }> = [];
      if (rand() < 0.3) {
        r.increment("errors.timeout", 1 + Math.floor(rand() * 3));
        samples.push({ event: "timeout", data: `no reply within ${Math.floor(rand() * 6)} s`, kind: "error" });
        samples.push({ event: "closed", data: `close ${1000 + Math.floor(rand() * 8)}`, kind: "error" });
      }
      for (let i = 0; i < n; i++) {
        r.recordMicros(HISTOGRAMS.messageLatency, 200 + rand() * rand() * 400_000);
        r.recordMicros(HISTOGRAMS.sendLag, rand() * 3000);
      }
      if (kind === "broadcast") {
        r.increment(COUNTERS.deliveriesExpected, 3 * n);
        r.increment(COUNTERS.deliveriesReceived, 3 * n - 1);
        r.increment(COUNTERS.deliveriesLost, 1);
        r.increment(COUNTERS.deliveriesRemote, a);
        r.increment("deliveries.late_joiner", index % 3);
        for (let i = 0; i < 3 * n; i++) r.recordMicros(HISTOGRAMS.deliveryLatency, 500 + rand() * 80_000);
      }
      if (kind === "storm") {
        r.increment(COUNTERS.canarySent, 1);
        r.increment(COUNTERS.canaryReceived, 1);
        r.recordMicros(HISTOGRAMS.canaryLatency, 1000 + rand() * 5000);
      }
      if (kind === "flow") {
        if (index <= 1) r.recordMicros(`setup.${index === 0 ? "login" : "join"}`, 10_000 + rand() * 1000);
        if (index === 2 && a === 0) r.increment("errors.setup.join", 1);
        if (index === 3 && a === 1) r.increment("errors.setup.token", 1);
        r.recordMicros(`message.latency.${a % 2 ? "chat" : "ping"}`, 1000 + rand() * 9000);
        r.increment("events.chat", n);
        r.increment("events.presence", a);
        r.increment("unmatched.presence", a);
        r.increment(COUNTERS.unmatched, a);
        r.increment(COUNTERS.pushReceived, 2);
        r.recordMicros(HISTOGRAMS.pushLatency, 3000);
        for (let i = 0; i < 7; i++) samples.push({ event: i % 3 ? "presence" : "typing", data: `a${a} i${index} #${i}` });
      }
      const sweepStep = Math.floor(index / 3);
      out.push({
        shardId: `shd_${a}`,
        agentId: `agt_${a}`,
        index,
        startedAt: 1_000_000 + 1000 * index + a * 3.5,
        durationMs: index === last ? 400 + a * 10 : 1000,
        activeMs: index === last ? 250 : undefined,
        warmup: index < 2,
        ...r.take(),
        health: {
          cpu: 20 + a,
          eventLoopDelayMs: { p50: 1, max: a === 3 && index === 4 ? 1500 : 3 },
          rssMb: 60 + index,
          sendLagMaxMs: rand() * 5,
          saturated: a === 2 && index === 5,
        },
        ...(kind === "sweep" ? { step: { index: sweepStep, rate: 10 * (sweepStep + 1), per: "aggregate" as const, failed: sweepStep === 3 && a === 0 } } : {}),
        ...(samples.length ? { samples } : {}),
      });
    }
  }
  return out;
}

const basePlan = {
  name: "t",
  target: { url: "ws://127.0.0.1:1/echo", protocol: "ws" },
  connections: { count: 10, rate: 10 },
  scenario: { kind: "echo", message: { bytes: 64, rate: 1 }, duration: "10s", warmup: "2s" },
  agents: { pool: "default", count: 4 },
};
const plans: Record<Kind, Plan> = {
  echo: planSchema.parse(basePlan),
  storm: planSchema.parse(basePlan),
  broadcast: planSchema.parse(basePlan),
  flow: planSchema.parse(basePlan),
  sweep: planSchema.parse({ ...basePlan, sweep: { from: 10, step: 10, steps: 5, hold: "3s", gap: "0s", stopWhen: { p99: "150ms" } } }),
};

/** What a from-scratch reader sees: every stored frame, by interval then shard. */
const stored = (list: TallyFrame[]) => [...list].sort((a, b) => a.index - b.index || a.shardId!.localeCompare(b.shardId!));

describe("run tally", () => {
  for (const kind of ["echo", "sweep", "broadcast", "flow", "storm"] as const) {
    it(`${kind}: frame by frame, in arrival order, equals a from-scratch merge of every frame (summary, steps, spectra, agents)`, () => {
      const all = frames(kind, kind.length * 7919);
      // Arrival order: agents interleaved, some frames late (spooled) — not the order a reader sorts them in.
      const arrival = [...all].sort((a, b) => a.index + (a.agentId === "agt_1" ? 5 : 0) - (b.index + (b.agentId === "agt_1" ? 5 : 0)));
      const tally = new RunTally();
      for (const f of arrival) tally.add(f);
      const thresholds = ["p95 < 100ms", "errors < 1%", "loss <= 50%"];
      const plan = plans[kind];
      expect(tally.frames).toBe(all.length);
      expect(tally.summary(thresholds, plan)).toEqual(summarizeRun(stored(all), thresholds, plan));
      expect(tally.summary(thresholds)).toEqual(summarizeRun(stored(all), thresholds));
      expect(tally.analysis()).toEqual(analyzeFrames(stored(all)));
    });
  }

  it("names the silent agent and the stall as the sanity checks do", () => {
    const all = frames("echo", 3);
    const tally = new RunTally();
    for (const f of all) tally.add(f);
    expect(tally.evidence()).toEqual({
      stallMaxMs: 1500,
      saturatedIntervals: 1,
      silent: [
        { agentId: "agt_1", missing: 1 },
        { agentId: "agt_3", missing: 1 },
      ],
    });
  });

  it("holds no frame: its memory does not grow with the frames it has taken", () => {
    const tally = new RunTally();
    const one = frames("echo", 5);
    for (let round = 0; round < 50; round++) for (const f of one) tally.add({ ...f, shardId: `${f.shardId}_${round % 3}` });
    expect(tally.frames).toBe(50 * one.length);
    // Nothing proportional to frames: agents, shards and seconds are as in one round.
    expect(tally.analysis().agents).toHaveLength(4);
    expect(tally.summary([]).intervals.measured).toBe(11);
  });
});
