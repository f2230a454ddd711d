import { stageSpans, type Stage } from "@volley/contracts";

/**
 * connections.stages as a function of time: how many connections should be open `t` µs after the
 * start. Within a stage the count moves linearly from the previous target (0 before the first
 * stage) to the stage's own, changing when the line crosses a whole number in the direction it
 * moves (rising: floor, falling: ceil), so each stage reaches its target exactly at its end.
 */
export class StagePlan {
  /** Stage i covers [starts[i], starts[i + 1]) µs from the start. */
  private readonly starts: number[] = [];
  private readonly from: number[] = [];
  readonly totalUs: number;

  constructor(private readonly stages: readonly Stage[]) {
    const spans = stageSpans(stages);
    for (const s of spans) {
      this.starts.push(s.startMs * 1000);
      this.from.push(s.from);
    }
    this.totalUs = (spans.at(-1)?.endMs ?? 0) * 1000;
  }

  /** The stage `tUs` falls in (the last one at and after the end). */
  stageAt(tUs: number): number {
    let i = 0;
    while (i + 1 < this.stages.length && this.starts[i + 1]! <= tUs) i++;
    return i;
  }

  /** Connections that should be open at `tUs`. */
  targetAt(tUs: number): number {
    if (tUs >= this.totalUs) return this.stages.at(-1)!.target;
    if (tUs < 0) return 0;
    const i = this.stageAt(tUs);
    const a = this.from[i]!,
      b = this.stages[i]!.target;
    const v = a + ((b - a) * (tUs - this.starts[i]!)) / this.lengthOf(i);
    // The epsilon keeps float error from moving a crossing past the instant nextChange promised.
    return b >= a ? Math.floor(v + 1e-9) : Math.ceil(v - 1e-9);
  }

  /** The first instant after `tUs` at which targetAt may change (Infinity after the end). */
  nextChange(tUs: number): number {
    if (tUs >= this.totalUs) return Infinity;
    if (tUs < 0) return 0;
    const i = this.stageAt(tUs);
    const a = this.from[i]!,
      b = this.stages[i]!.target;
    const start = this.starts[i]!,
      end = start + this.lengthOf(i);
    if (a === b) return end;
    const n = this.targetAt(tUs);
    const next = b > a ? n + 1 : n - 1;
    // The instant the line reaches `next` (rising) or leaves `n` for `next` (falling: ceil drops at v = next).
    const at = start + ((next - a) / (b - a)) * this.lengthOf(i);
    return Math.min(Math.max(at, tUs + 1), end);
  }

  private lengthOf(i: number): number {
    return (i + 1 < this.starts.length ? this.starts[i + 1]! : this.totalUs) - this.starts[i]!;
  }
}
