import { deflateSync } from "node:zlib";
import { createHistogram, encodeHistogram } from "@volley/metrics";
import type { IntervalFrame } from "@volley/contracts";
import type { ScriptedAgent } from "./scripted-agent";
import { testFrame } from "./fixtures";

/**
 * What an abusive agent puts in its frames' histograms:
 * - `maximal`: valid histograms as costly as the format allows (a count in every bucket, each one
 *   random, so deflate cannot shrink them): each is inflated and walked in full; 7 per frame, just
 *   under the hub's default HUB_MAX_FRAME_HISTOGRAM_BYTES;
 * - `dense`: valid histograms as costly to decode per byte as the format allows (a count of 1 in
 *   every bucket deflates to ~1.6 kB yet is walked bucket by bucket, ~25× the decoding per byte of
 *   `maximal`); 64 per frame. An agent sending these overdraws its decoding budget long before its
 *   byte budget whatever the CPU, where `maximal` frames overdraw either first depending on the CPU;
 * - `bomb`: a histogram as long as one may be that inflates ~1000-fold (zeros), in a frame otherwise valid;
 * - `oversize`: one 7 MB decompression bomb (~7 GB inflated), the frame the hardening round sent;
 * - `malformed`: a histogram that is not HdrHistogram's encoding at all.
 */
export type AbuseKind = "maximal" | "dense" | "bomb" | "oversize" | "malformed";

/** The V2 compressed envelope around `deflated` (cookie and length), as base64. */
function envelope(deflated: Buffer): string {
  const head = Buffer.alloc(8);
  head.writeInt32BE(0x1c849314, 0);
  head.writeInt32BE(deflated.byteLength, 4);
  return Buffer.concat([head, deflated]).toString("base64");
}

let maximal: string | undefined;
/** A valid encoded histogram with a random count in each of its ~22,500 buckets (built once, ~270 kB). */
export function maximalHistogram(): string {
  if (maximal) return maximal;
  const h = createHistogram(32);
  // 1 µs to 1 h in steps finer than a bucket (3 digits: 2048 sub-buckets per power of two).
  for (let v = 1; v < 3_600_000_000; v = Math.max(v + 1, Math.floor(v * (1 + 1 / 4096)))) h.recordValueWithCount(v, 1 + Math.floor(Math.random() * 2 ** 30));
  maximal = encodeHistogram(h);
  return maximal;
}

let dense: string | undefined;
/** A valid encoded histogram with a count of 1 in each of its ~22,500 buckets (built once, ~1.6 kB). */
export function denseHistogram(): string {
  if (dense) return dense;
  const h = createHistogram(32);
  for (let v = 1; v < 3_600_000_000; v = Math.max(v + 1, Math.floor(v * (1 + 1 / 4096)))) h.recordValueWithCount(v, 1);
  dense = encodeHistogram(h);
  return dense;
}

let bomb: string | undefined;
/** 64 MB of zeros deflated (~64 kB): a decompression bomb well inside the per-histogram length limit. */
export function bombHistogram(): string {
  bomb ??= envelope(deflateSync(Buffer.alloc(64 * 1024 * 1024)));
  return bomb;
}

let oversize: string | undefined;
/**
 * A ~7 MB (base64) "histogram" like the bomb the hardening round sent (that one inflated to ~5 GB and
 * stalled the hub 20–30 s): copies of the 64 MB bomb's stream, refused by its length before any inflate.
 */
export function oversizeHistogram(): string {
  if (!oversize) {
    const one = deflateSync(Buffer.alloc(64 * 1024 * 1024));
    oversize = envelope(Buffer.concat(Array.from({ length: Math.ceil((5.25 * 1024 * 1024) / one.byteLength) }, () => one)));
  }
  return oversize;
}

/** An abusive frame of `kind` for `ids`, otherwise as an agent sends them. */
export function abusiveFrame(ids: { runId: string; shardId: string; agentId: string }, seq: number, kind: AbuseKind): IntervalFrame {
  const frame = testFrame(ids, seq, [5]);
  const histograms: Record<string, string> = { ...frame.histograms };
  if (kind === "maximal") for (let i = 0; i < 7; i++) histograms[`message.latency.k${i}`] = maximalHistogram();
  else if (kind === "dense") for (let i = 0; i < 64; i++) histograms[`message.latency.d${i}`] = denseHistogram();
  else if (kind === "bomb") histograms["message.latency.bomb"] = bombHistogram();
  else if (kind === "oversize") histograms["message.latency.bomb"] = oversizeHistogram();
  else histograms["message.latency.bad"] = Buffer.from("not an HdrHistogram at all, just text").toString("base64");
  return { ...frame, histograms };
}

export interface FloodResult {
  /** Frames sent (each acknowledged or cut short by the disconnect). */
  sent: number;
  /** The hub's refusals, in order (at most the last 20). */
  refusals: string[];
  /** The refusal that cut the agent off (`agent cut off by the hub …`), if one came. */
  cutOff: string | null;
  /** Socket.IO's reason, once the hub disconnected the agent. */
  disconnected: string | null;
}

/**
 * Floods frames of `kinds` (in turn) for `ids` from `agent`, `inFlight` at a time, until the hub
 * disconnects it, `maxFrames` were sent, or `timeoutMs` passed. What an org's misbehaving agent
 * does to the shared hub (issue 31 #1); used by agent-abuse.test.ts and by bench/chaos-soak.ts.
 */
export async function floodFrames(
  agent: ScriptedAgent,
  ids: { runId: string; shardId: string },
  opts: { kinds: AbuseKind[]; maxFrames?: number; timeoutMs?: number; inFlight?: number },
): Promise<FloodResult> {
  const { kinds, maxFrames = 1000, timeoutMs = 30_000, inFlight = 4 } = opts;
  const result: FloodResult = { sent: 0, refusals: [], cutOff: null, disconnected: null };
  const disconnected = new Promise<void>((resolve) => {
    if (!agent.socket.connected) {
      result.disconnected = "not connected";
      return resolve();
    }
    agent.socket.once("disconnect", (reason) => {
      result.disconnected = reason;
      resolve();
    });
  });
  const deadline = Date.now() + timeoutMs;
  const sender = async () => {
    while (result.disconnected === null && result.sent < maxFrames && Date.now() < deadline) {
      const seq = result.sent++;
      const frame = abusiveFrame({ ...ids, agentId: agent.agentId }, seq, kinds[seq % kinds.length]!);
      const ack = await Promise.race([agent.sendFrame(frame).catch(() => null), disconnected.then(() => null)]);
      if (ack && !ack.ok) {
        result.refusals.push(ack.error);
        if (result.refusals.length > 20) result.refusals.shift();
        if (ack.error.startsWith("agent cut off")) result.cutOff ??= ack.error;
      }
    }
  };
  await Promise.all(Array.from({ length: inFlight }, sender));
  // The hub disconnects right after its cut-off refusal.
  if (result.cutOff && result.disconnected === null) await Promise.race([disconnected, new Promise((r) => setTimeout(r, 5000))]);
  return result;
}
