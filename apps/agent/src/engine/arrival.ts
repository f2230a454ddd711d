/**
 * Inter-arrival gaps for open-loop sending. Constant arrival uses t0 + k·interval (computed from k,
 * never accumulated, so float error cannot drift the rate); Poisson draws exponential gaps.
 */
export interface Arrival {
  /** Intended time (µs) of message number k, given the previous intended time. */
  next(k: number, t0Us: number, prevUs: number): number;
  /** next depends on its arguments alone (constant arrival), so it may be asked ahead, for a prediction; Poisson draws. */
  pure: boolean;
}

export function createArrival(kind: "constant" | "poisson", ratePerSecond: number, random: () => number = Math.random): Arrival {
  const intervalUs = 1_000_000 / ratePerSecond;
  if (kind === "constant") return { next: (k, t0Us) => t0Us + k * intervalUs, pure: true };
  return {
    pure: false,
    next: (k, t0Us, prevUs) => {
      if (k === 0) return t0Us;
      // 1 - random() is in (0, 1], so the log is finite.
      return prevUs - Math.log(1 - random()) * intervalUs;
    },
  };
}
