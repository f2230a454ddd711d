import { afterEach, describe, expect, it } from "vitest";
import { PreciseWake } from "./precise-wake";

const monoUs = () => performance.now() * 1000;
const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));
/** Waits (on a busy machine, however long it takes) until `n` fires are in, then past `untilUs`, when a wrong extra one would be in too. */
async function settle(fired: unknown[], n: number, untilUs: number) {
  const giveUp = Date.now() + 5_000;
  while (fired.length < n && Date.now() < giveUp) await sleep(1);
  while (monoUs() < untilUs + 5_000) await sleep(1);
}
const open: PreciseWake[] = [];
afterEach(() => {
  for (const w of open.splice(0)) w.close();
});

/** A waker whose fires are recorded as [target, fired at]; `next` decides the following target, `then` each request's prediction. */
function recorder(prepare: boolean, next: (fired: number, lastTargetUs: number) => number | undefined, then: (targetUs: number) => number = () => Number.NaN) {
  const fires: { targetUs: number; atUs: number }[] = [];
  let target = 0;
  let done: () => void = () => {};
  const finished = new Promise<void>((r) => (done = r));
  const wake = new PreciseWake(monoUs, () => {
    fires.push({ targetUs: target, atUs: monoUs() });
    const t = next(fires.length, target);
    if (t === undefined) return done();
    target = t;
    wake.at(target, then(target));
  });
  open.push(wake);
  if (prepare) wake.prepare();
  return {
    fires,
    finished,
    start(atUs: number) {
      target = atUs;
      wake.at(atUs, then(atUs));
    },
    wake,
  };
}

describe("PreciseWake", () => {
  // Precision is a benchmark's business (bench/send-lag.ts); here: never early, never lost, never twice.
  it.each([
    ["with the sleeper thread", true],
    ["on timers alone", false],
  ])("fires each request once and never before its instant, %s", async (_, prepare) => {
    const gaps = [20, 80, 150, 400, 900, 1_500, 3_500, 5_000, 60, 10];
    const r = recorder(prepare, (n) => (n < gaps.length ? monoUs() + gaps[n]! : undefined));
    await sleep(50);
    r.start(monoUs() + gaps[0]!);
    await r.finished;
    expect(r.fires).toHaveLength(gaps.length);
    for (const f of r.fires) expect(f.atUs).toBeGreaterThanOrEqual(f.targetUs);
  });

  it("a new request replaces the pending one, earlier or later, and cancel drops it", async () => {
    const fired: number[] = [];
    const wake = new PreciseWake(monoUs, () => fired.push(monoUs()));
    open.push(wake);
    wake.prepare();
    await sleep(50);
    const t0 = monoUs();
    wake.at(t0 + 2_000);
    wake.at(t0 + 500); // earlier: the sleeper must be told
    await settle(fired, 1, t0 + 2_000);
    expect(fired).toHaveLength(1);
    expect(fired[0]!).toBeGreaterThanOrEqual(t0 + 500);

    const t1 = monoUs();
    wake.at(t1 + 300);
    wake.at(t1 + 1_200); // later: found by the sleeper when the first deadline passes
    await settle(fired, 2, t1 + 1_200);
    expect(fired).toHaveLength(2);
    expect(fired[1]!).toBeGreaterThanOrEqual(t1 + 1_200);

    const t2 = monoUs();
    wake.at(t2 + 400);
    wake.cancel();
    await settle(fired, 0, t2 + 400);
    expect(fired).toHaveLength(2);
  });

  it("loses no wake-up when requests are moved at random, as the engine moves them on every event", async () => {
    const fired: { target: number; at: number }[] = [];
    let target = 0;
    const wake = new PreciseWake(monoUs, () => fired.push({ target, at: monoUs() }));
    open.push(wake);
    wake.prepare();
    await sleep(50);
    let seed = 7;
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (let round = 0; round < 40; round++) {
      // Several moves before the instant, then it must still fire exactly once. A move may come after
      // its request already fired (a busy machine turning the loop slower than 100 µs): that request
      // was not replaced, and its fire counts before the last move.
      for (let move = 0; move < 4; move++) {
        target = monoUs() + 100 + random() * 1_500;
        wake.at(target);
        await new Promise((res) => setImmediate(res));
      }
      const before = fired.length;
      target = monoUs() + 100 + random() * 1_500;
      wake.at(target);
      while (fired.length === before) await sleep(1);
      expect(fired).toHaveLength(before + 1);
    }
    // A replaced request that fired anyway would carry a later request's target, so it would read early.
    for (const f of fired) expect(f.at).toBeGreaterThanOrEqual(f.target);
    const total = fired.length;
    await settle(fired, total, monoUs() + 2_000);
    expect(fired).toHaveLength(total);
  });

  it("fires nothing after close", async () => {
    const fired: number[] = [];
    const wake = new PreciseWake(monoUs, () => fired.push(monoUs()));
    wake.prepare();
    const t0 = monoUs();
    wake.at(t0 + 1_000);
    wake.close();
    await settle(fired, 0, t0 + 1_000);
    expect(fired).toEqual([]);
  });
});

describe("PreciseWake predictions", () => {
  /** A chain of requests `gapUs` apart, each passing the one after as its prediction (or `wrongBy` off it). */
  async function chain(n: number, gapUs: number, wrongByUs: number) {
    // Each next instant is where the last prediction said, but for wrongByUs.
    const r = recorder(
      true,
      (fired, lastUs) => (fired < n ? lastUs + gapUs : undefined),
      (targetUs) => targetUs + gapUs + wrongByUs,
    );
    await r.wake.prepare();
    // Idle past the first utilisation window (it opens at construction): judged busy, it waits on timers alone.
    await sleep(120);
    r.start(monoUs() + 2_000);
    await r.finished;
    return { fires: r.fires, signals: r.wake.signals };
  }

  it("a request that lands where the last one predicted needs no signal to the sleeper", async () => {
    const { fires, signals } = await chain(40, 2_500, 0);
    expect(fires).toHaveLength(40);
    for (const f of fires) expect(f.atUs).toBeGreaterThanOrEqual(f.targetUs);
    // Without predictions (or with ones too late) every request signals. With them, the first does
    // (the sleeper is parked), and one does after a wake-up so late that its prediction had passed,
    // or after a spell on timers alone: on a busy machine a few, never most.
    expect(signals).toBeLessThan(40 / 3);
  });

  it("a request made after the last deadline passed, before its post is read, is not left until the prediction", async () => {
    const fired: number[] = [];
    const wake = new PreciseWake(monoUs, () => fired.push(monoUs()));
    open.push(wake);
    await wake.prepare();
    await sleep(120);
    const t1 = monoUs() + 2_000;
    wake.at(t1, t1 + 1_000_000);
    // Busy past t1 (a shard's start opening its connections): the sleeper posts meanwhile, unread,
    // and goes on to sleep until its prediction, a second later.
    while (monoUs() < t1 + 1_000);
    const t2 = monoUs() + 2_000;
    wake.at(t2, t2 + 1_000_000);
    await settle(fired, 1, t2 + 100_000);
    expect(fired).toHaveLength(1);
    expect(fired[0]!).toBeGreaterThanOrEqual(t2);
    expect(fired[0]! - t2).toBeLessThan(100_000);
  });

  it.each([
    ["too early", -600],
    ["too late", 600],
  ])("a prediction %s still fires every request once and never before its instant", async (_, wrongByUs) => {
    const { fires } = await chain(30, 1_500, wrongByUs);
    expect(fires).toHaveLength(30);
    for (const f of fires) expect(f.atUs).toBeGreaterThanOrEqual(f.targetUs);
  });
});
