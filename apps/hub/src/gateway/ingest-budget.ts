import { seconds } from "../util/wait";

/**
 * What one hub lets agents spend of its event loop on their frames (env.ts HUB_INGEST_*). Per hub
 * replica: each replica guards its own loop.
 */
export interface IngestLimits {
  /** The window budgets are averaged over (a bucket holds `rate × window`). */
  windowMs: number;
  /** Milliseconds of frame checking and decoding one agent may cost per second. */
  agentMsPerS: number;
  /** The same for all agents of one organization together. */
  orgMsPerS: number;
  /** Bytes of encoded histograms one agent may send per second. */
  agentBytesPerS: number;
  orgBytesPerS: number;
  /** Refused frames (malformed, unreadable, for a shard not its own) an agent may send per window. */
  maxRefusedFrames: number;
  /** One frame's encoded histograms together, refused past this before anything is decoded. */
  maxFrameHistogramBytes: number;
  /** How long a cut-off agent's reconnects are refused. */
  cutOffMs: number;
}

export const DEFAULT_INGEST_LIMITS: IngestLimits = {
  windowMs: 10_000,
  agentMsPerS: 100,
  orgMsPerS: 250,
  agentBytesPerS: 4 * 1024 * 1024,
  orgBytesPerS: 16 * 1024 * 1024,
  maxRefusedFrames: 50,
  maxFrameHistogramBytes: 1024 * 1024,
  cutOffMs: 60_000,
};

/** A budget an agent overdrew: why, in words naming the setting, and the setting. */
export interface Overdrawn {
  why: string;
  setting: string;
}

/** Tokens refilled at `perMs` up to `capacity`; spending may overdraw it (the frame was already paid for). */
class Bucket {
  private level: number;
  private at: number;

  constructor(
    private readonly capacity: number,
    private readonly perMs: number,
    now: number,
  ) {
    this.level = capacity;
    this.at = now;
  }

  /** Spends `n` and says whether the bucket is overdrawn. */
  spend(n: number, now: number): boolean {
    this.level = Math.min(this.capacity, this.level + (now - this.at) * this.perMs) - n;
    this.at = now;
    return this.level < 0;
  }

  full(now: number): boolean {
    return this.level + (now - this.at) * this.perMs >= this.capacity;
  }
}

/** Buckets by key; past `max` keys the full ones (nothing owed) are dropped. */
class Buckets {
  private readonly map = new Map<string, Bucket>();

  constructor(
    private readonly perSecond: number,
    private readonly windowMs: number,
  ) {}

  spend(key: string, n: number, now: number): boolean {
    let b = this.map.get(key);
    if (!b) {
      if (this.map.size >= 10_000) for (const [k, old] of this.map) if (old.full(now)) this.map.delete(k);
      b = new Bucket((this.perSecond * this.windowMs) / 1000, this.perSecond / 1000, now);
      this.map.set(key, b);
    }
    return b.spend(n, now);
  }
}

/**
 * Per-agent and per-org token buckets for what agents' frames cost this hub: milliseconds of
 * checking and decoding, measured around the work, bytes of encoded histograms, and refused frames.
 * An agent that overdraws any of them is to be cut off (the gateway does it); `block` remembers it
 * for `cutOffMs` so its reconnects are refused. The state is in memory, per replica.
 */
export class IngestBudget {
  private readonly agentMs: Buckets;
  private readonly orgMs: Buckets;
  private readonly agentBytes: Buckets;
  private readonly orgBytes: Buckets;
  private readonly refusals: Buckets;
  private readonly blocked = new Map<string, { until: number; reason: string }>();
  private readonly window: string;

  constructor(
    readonly limits: IngestLimits,
    private readonly now: () => number = () => performance.now(),
  ) {
    const w = limits.windowMs;
    this.agentMs = new Buckets(limits.agentMsPerS, w);
    this.orgMs = new Buckets(limits.orgMsPerS, w);
    this.agentBytes = new Buckets(limits.agentBytesPerS, w);
    this.orgBytes = new Buckets(limits.orgBytesPerS, w);
    this.refusals = new Buckets((limits.maxRefusedFrames * 1000) / w, w);
    this.window = `averaged over HUB_INGEST_WINDOW_S=${w / 1000} s`;
  }

  /** Charges the milliseconds a frame's checks took; 0 asks whether the agent or its org is already overdrawn. */
  spendMs(agentId: string, orgId: string, ms: number): Overdrawn | null {
    const now = this.now();
    const { agentMsPerS, orgMsPerS } = this.limits;
    // Both are charged: what an agent spent counts against its org whichever ran out.
    const agent = this.agentMs.spend(agentId, ms, now);
    const org = this.orgMs.spend(orgId, ms, now);
    if (agent)
      return {
        setting: "HUB_INGEST_AGENT_MS_PER_S",
        why: `its frames cost the hub more than HUB_INGEST_AGENT_MS_PER_S=${agentMsPerS} ms of checking and decoding per second (${this.window})`,
      };
    if (org)
      return {
        setting: "HUB_INGEST_ORG_MS_PER_S",
        why: `the frames of its organization's agents cost the hub more than HUB_INGEST_ORG_MS_PER_S=${orgMsPerS} ms of checking and decoding per second (${this.window})`,
      };
    return null;
  }

  spendBytes(agentId: string, orgId: string, bytes: number): Overdrawn | null {
    const now = this.now();
    const { agentBytesPerS, orgBytesPerS } = this.limits;
    const agent = this.agentBytes.spend(agentId, bytes, now);
    const org = this.orgBytes.spend(orgId, bytes, now);
    if (agent)
      return {
        setting: "HUB_INGEST_AGENT_BYTES_PER_S",
        why: `it sent more than HUB_INGEST_AGENT_BYTES_PER_S=${agentBytesPerS} bytes of encoded histograms per second (${this.window})`,
      };
    if (org)
      return {
        setting: "HUB_INGEST_ORG_BYTES_PER_S",
        why: `its organization's agents sent more than HUB_INGEST_ORG_BYTES_PER_S=${orgBytesPerS} bytes of encoded histograms per second (${this.window})`,
      };
    return null;
  }

  /** Counts one refused frame of the agent; `last` is its refusal, quoted when this is one too many. */
  refused(agentId: string, last: string): Overdrawn | null {
    if (!this.refusals.spend(agentId, 1, this.now())) return null;
    return {
      setting: "HUB_INGEST_MAX_REFUSED_FRAMES",
      why: `more than HUB_INGEST_MAX_REFUSED_FRAMES=${this.limits.maxRefusedFrames} of its frames were refused within HUB_INGEST_WINDOW_S=${this.limits.windowMs / 1000} s (the last: ${last})`,
    };
  }

  /** The agent's reconnects (by these identity keys) are refused for cutOffMs with `reason`. */
  block(keys: string[], reason: string): void {
    const now = this.now();
    for (const [k, b] of this.blocked) if (b.until <= now) this.blocked.delete(k);
    for (const k of keys) this.blocked.set(k, { until: now + this.limits.cutOffMs, reason });
  }

  /** Why an agent with one of these identity keys is still refused (null: it is not). */
  blockedReason(keys: string[]): string | null {
    const now = this.now();
    for (const k of keys) {
      const b = this.blocked.get(k);
      if (b && b.until > now) return `${b.reason} (refused for another ${seconds(b.until - now)})`;
    }
    return null;
  }
}
