/**
 * The two earliest of the instants offered since the last reset: the engine's next wake-up and its
 * prediction of the one after (for PreciseWake). One instance, reused every tick: nothing allocated per send.
 */
export class SoonestTwo {
  first = Infinity;
  second = Infinity;

  reset(): this {
    this.first = this.second = Infinity;
    return this;
  }

  add(t: number): this {
    if (t < this.first) {
      this.second = this.first;
      this.first = t;
    } else if (t < this.second) this.second = t;
    return this;
  }
}
