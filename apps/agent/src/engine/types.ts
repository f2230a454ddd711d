import type { IntervalFrame, ShardEndStatus } from "@volley/contracts";
import type { Driver } from "../drivers/driver";
import type { Clock } from "./clock";
import type { RateFeed } from "./rate-feed";

/** How a shard ended (contracts shard-lifecycle). */
export type ShardStatus = ShardEndStatus;

/** A frame as the engine makes it; whoever ships it adds the run, shard, agent and sequence ids. */
export type EngineFrame = Omit<IntervalFrame, "runId" | "shardId" | "agentId" | "seq">;

export interface RunShardOptions {
  /** The synchronized start instant, hub-clock epoch ms. Interval 0 begins exactly here. */
  startAt: number;
  /** Defaults to the local clocks with no hub offset (standalone runs). */
  clock?: Clock;
  /**
   * Called once per interval in order, the final partial one included, a few event-loop turns after
   * the interval ends (its histograms are encoded in steps between sends); every frame has been
   * delivered when runShard resolves. Keep it cheap: it runs on the sending loop.
   */
  onFrame: (frame: EngineFrame) => void;
  /** Aborting stops sending and connecting at once, flushes the partial frame and ends "aborted". */
  signal?: AbortSignal;
  /** Overrides the driver chosen from plan.target.protocol (tests, custom transports). */
  driver?: Driver;
  /** Source of randomness for Poisson arrivals (tests pass a seeded one). */
  random?: () => number;
  /**
   * This shard's name in group room names (`<room>-<shard>-<group>`): the hub's shard id. Absent
   * (standalone runs, tests), a random one, so two runs never share a group room.
   */
  shard?: string;
  /**
   * Local addresses to bind, connection i taking address i mod n (AGENT_SOURCE_ADDRESSES,
   * `--source-addresses`). Empty or absent: the OS picks, as usual.
   */
  sourceAddresses?: readonly string[];
  /**
   * Hosted mode (the hub's welcome.targetPolicy): refuse the target, and every connection, whose
   * host is or resolves to an address that is not public (private, loopback, link-local …).
   */
  publicOnly?: boolean;
  /** Live rate changes (the run page's rate control), for plans contracts' rateControlRefusal accepts. */
  rate?: RateFeed;
  /** Called once when the schedule actually begins, with that instant in hub-clock epoch ms (start skew). */
  onStart?: (startedAtHubMs: number) => void;
}

/** Whole-shard totals, for logs, the standalone CLI and tests; the frames carry the same counts. */
export interface ShardTotals {
  /** Messages the schedule called for, from each connection's open time to the end (stages: or to its retirement; sweep: the holds; Poisson: expected value). */
  expected: number;
  sent: number;
  received: number;
  lost: number;
  /** Slots the agent gave up on unsent, too far behind to send them (COUNTERS.shed): expected ≈ sent + shed. */
  shed: number;
  duplicated: number;
  opened: number;
  failed: number;
  closed: number;
  /** Broadcast and groups: deliveries of this shard's messages (expected = received + lost once drained). */
  deliveries?: { expected: number; received: number; lost: number; remote: number };
  /** Storm: the canary connection's pings, apart from the crowd's (not in sent/received/lost). */
  canary?: { sent: number; received: number; lost: number };
}

export interface ShardOutcome {
  status: ShardStatus;
  error?: string;
  /** Sweep: the step that broke stopWhen and why, when the sweep stopped early. */
  sweepStopped?: string;
  frames: number;
  totals: ShardTotals;
}
