import { durationMs, type UsersScenario } from "@volley/contracts";

/** One piece of the arrival-rate line: from `startUs` for `lengthUs`, the rate moving linearly from `from` to `to` (users/s). */
interface Segment {
  startUs: number;
  lengthUs: number;
  from: number;
  to: number;
  /** Expected arrivals before the segment (the integral of the rate up to startUs). */
  before: number;
}

const S = 1_000_000;

/**
 * When users arrive, µs from the start instant: the k-th arrival is where the expected number of
 * arrivals (the integral of the rate line) reaches k (constant), or a sum of k exponential gaps
 * (Poisson), so a ramp brings exactly the users its rates call for. Arrivals stop at `duration`.
 */
export class UserArrivals {
  /** The plan's own rate line. */
  private readonly base: Segment[] = [];
  /** The line arrivals follow: the plan's, times each live rate change's scale from its instant. */
  private segments: Segment[];
  /** Live rate changes, by instant (µs from the start): the plan's rates times `scale` from `atUs` on. */
  private readonly changes: Array<{ atUs: number; scale: number }> = [];
  private readonly endUs: number;
  private readonly poisson: boolean;
  /** Arrivals handed out so far. */
  private k = 0;
  /** The expected-arrivals level of the last one. */
  private level = 0;

  constructor(
    scenario: UsersScenario,
    private readonly random: () => number,
  ) {
    this.endUs = durationMs(scenario.duration) * 1000;
    this.poisson = scenario.arrival === "poisson";
    let at = 0;
    let rate = scenario.arrivalRate;
    let before = 0;
    const add = (lengthUs: number, to: number) => {
      if (lengthUs <= 0) return void (rate = to);
      this.base.push({ startUs: at, lengthUs, from: rate, to, before });
      before += ((rate + to) / 2) * (lengthUs / S);
      at += lengthUs;
      rate = to;
    };
    for (const st of scenario.stages ?? []) add(durationMs(st.duration) * 1000, st.target);
    add(this.endUs - at, rate);
    this.segments = this.base;
  }

  /**
   * A live rate change: from `atUs` (from the start) the plan's rate line is multiplied by `scale`
   * (not compounded with earlier changes). Arrivals already handed out stay; `pending()` then says
   * where the next one falls on the new line.
   */
  rescale(atUs: number, scale: number): void {
    this.changes.push({ atUs, scale });
    this.changes.sort((a, b) => a.atUs - b.atUs);
    const scaleAt = (t: number) => this.changes.reduce((k, c) => (c.atUs <= t ? c.scale : k), 1);
    const out: Segment[] = [];
    let before = 0;
    for (const b of this.base) {
      const end = b.startUs + b.lengthUs;
      const cuts = [b.startUs, ...this.changes.map((c) => c.atUs).filter((t) => t > b.startUs && t < end), end];
      const rateAt = (t: number) => b.from + ((b.to - b.from) * (t - b.startUs)) / b.lengthUs;
      for (let i = 0; i + 1 < cuts.length; i++) {
        const [from, to] = [cuts[i]!, cuts[i + 1]!];
        const k = scaleAt(from);
        const seg = { startUs: from, lengthUs: to - from, from: rateAt(from) * k, to: rateAt(to) * k, before };
        out.push(seg);
        before += ((seg.from + seg.to) / 2) * (seg.lengthUs / S);
      }
    }
    this.segments = out;
  }

  /** The arrival next() handed out last, on the current line (moved by a rate change after it was handed out). */
  pending(): number {
    const at = this.offsetOf(this.level);
    return at < this.endUs ? at : Infinity;
  }

  /** The next arrival's offset from the start instant, µs; Infinity once arrivals are over. */
  next(): number {
    // The first user arrives at the start (level 0), as the first message of a schedule is sent there.
    if (this.k++ > 0) this.level += this.poisson ? -Math.log(1 - this.random()) : 1;
    const at = this.offsetOf(this.level);
    return at < this.endUs ? at : Infinity;
  }

  /** Where the expected arrivals reach `level`: inverts the integral of the rate line. */
  private offsetOf(level: number): number {
    for (const s of this.segments) {
      const inSegment = ((s.from + s.to) / 2) * (s.lengthUs / S);
      // A level reached exactly at a segment's end arrives in the next segment that has users (after a pause, not before it).
      if (level >= s.before + inSegment - 1e-9) continue;
      const y = level - s.before;
      const slope = (s.to - s.from) / (s.lengthUs / S); // users/s per s
      let t: number;
      if (Math.abs(slope) < 1e-12) {
        if (s.from <= 0) continue;
        t = y / s.from;
      } else {
        // from·t + slope·t²/2 = y, the root inside the segment.
        const disc = s.from * s.from + 2 * slope * y;
        t = (-s.from + Math.sqrt(Math.max(0, disc))) / slope;
      }
      return s.startUs + Math.min(s.lengthUs, Math.max(0, t * S));
    }
    return Infinity;
  }
}
