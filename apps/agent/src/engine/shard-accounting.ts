import { randomInt } from "node:crypto";
import { COUNTERS, ERROR_PREFIX, ERROR_SAMPLE_CHARS, ERROR_SAMPLES_PER_CLASS, HISTOGRAMS, type IntervalFrame, type TemplateContext } from "@volley/contracts";
import type { IntervalRecorder } from "@volley/metrics";
import { DELIVERY, DeliveryTracker } from "./delivery-tracker";
import { decodeMessage, decodeShardTag, encodeMessage, type DecodedMessage } from "./message-codec";
import { PendingTracker, REPLY } from "./pending-tracker";
import type { ScenarioRoles } from "./scenario-roles";
import type { ShardTotals } from "./types";
import { FlowCodec, sampleText, type FlowMatch } from "../flow/flow-codec";
import type { FlowProgram } from "../flow/flow-program";

/** Flows: counters per incoming event, and unmatched messages (their samples go out in frames). */
export const EVENT_PREFIX = "events.";
export const UNMATCHED_PREFIX = "unmatched.";

/**
 * What a shard's messages became: round trips, deliveries to room members and the canary's pings,
 * each timed from the intended send time and counted into the interval recorder and the totals.
 * The engine decides when to send and which connections exist; this decides what every message
 * that comes back means.
 */
export class ShardAccounting {
  private readonly tracker: PendingTracker;
  /** Broadcast and groups only. */
  private readonly deliveries: DeliveryTracker | undefined;
  /** Storm only: the canary's own round trips. */
  private readonly canaryTracker: PendingTracker | undefined;
  /** Marks this shard's messages, so copies from other shards in a shared room are told apart. */
  private readonly shardTag = randomInt(1, 0xffff_ffff);
  private readonly deliveryOut = { extra: false, outOfOrder: false };
  private readonly seqs: number[] = [];
  /** When each connection opened, until its first message arrives (then -1). */
  private readonly openedAt: number[] = [];
  /** Highest sequence answered per connection, to count replies that arrive out of order. */
  private readonly newestReply: number[] = [];
  /** Flows only. */
  private flow: FlowCodec | undefined;
  private readonly eventCounter = new Map<string | undefined, string>();
  private readonly samplesTaken = new Map<string, number>();
  private sampleLimit = 0;
  /** Round trips go to this histogram: a closed loop's are response times, kept apart from latency. */
  private latencyName: string = HISTOGRAMS.messageLatency;
  /** Unmatched messages and error texts kept to show what the server actually sent; the frames take them. */
  readonly samples: NonNullable<IntervalFrame["samples"]> = [];
  /** Per error class, the distinct texts sampled so far (at most ERROR_SAMPLES_PER_CLASS). */
  private readonly errorTexts = new Map<string, string[]>();

  constructor(
    private readonly recorder: IntervalRecorder,
    private readonly totals: ShardTotals,
    private readonly roles: ScenarioRoles,
    private readonly canaryId: number,
    private readonly bytes: number,
    timeoutUs: number,
  ) {
    this.tracker = new PendingTracker(timeoutUs);
    if (roles.roomFor(0) !== undefined) {
      this.deliveries = new DeliveryTracker(timeoutUs);
      totals.deliveries = { expected: 0, received: 0, lost: 0, remote: 0 };
    }
    if (canaryId >= 0) {
      this.canaryTracker = new PendingTracker(timeoutUs);
      totals.canary = { sent: 0, received: 0, lost: 0 };
    }
  }

  /** Flows: messages are rendered and replies matched by the plan's flow from now on. */
  useFlow(program: FlowProgram, random: () => number): FlowCodec {
    this.flow = new FlowCodec(program, this.shardTag, random, (connId, seq) => this.tracker.has(connId, seq));
    if (this.deliveries) this.deliveries.preJoin = true;
    this.sampleLimit = program.flow.samples;
    return this.flow;
  }

  /** http-rps `loop: closed`: round trips are response times (HISTOGRAMS.closedLoopResponseTime), never message.latency. */
  closedLoop(): void {
    this.latencyName = HISTOGRAMS.closedLoopResponseTime;
  }

  /** True while message `seq` of connection `id` still awaits its reply. */
  awaits(id: number, seq: number): boolean {
    return this.tracker.has(id, seq);
  }

  /** Flows: connection `id`'s template context (its index, row and captures). */
  bindFlow(id: number, ctx: TemplateContext): void {
    this.flow!.bind(id, ctx);
  }

  flowContext(id: number): TemplateContext | undefined {
    return this.flow?.context(id);
  }

  /** Replies and deliveries awaited: the shard is not drained while any is. */
  get outstanding(): number {
    return this.tracker.outstanding + (this.deliveries?.outstanding ?? 0) + (this.canaryTracker?.outstanding ?? 0);
  }

  /** When expiry next has work. */
  nextDeadline(): number {
    return Math.min(this.tracker.nextDeadline(), this.deliveries?.nextDeadline() ?? Infinity, this.canaryTracker?.nextDeadline() ?? Infinity);
  }

  /** A connection opened (and, with a room, is in it: it expects every member's message from now on). */
  opened(id: number, nowUs: number, room: string | undefined): void {
    // A reconnected connection goes on counting: its message ids stay unique in the run.
    this.seqs[id] ??= 0;
    this.openedAt[id] = nowUs;
    if (room !== undefined) this.deliveries!.join(id, room);
  }

  /** Registers the next message of connection `id` and returns its wire form. */
  message(id: number, intendedUs: number): Buffer {
    const seq = this.seqs[id]!;
    this.seqs[id] = seq + 1;
    this.register(id, seq, intendedUs, true);
    return encodeMessage(id, seq, intendedUs, this.bytes, this.shardTag, this.deliveries?.lastTick);
  }

  /**
   * Flows: registers the next message of connection `id` and renders it. `awaits` is false for a
   * fire-and-forget kind (counted sent, no reply awaited); `ack` when the acknowledgement is the reply.
   */
  flowMessage(id: number, intendedUs: number): { seq: number; out: ReturnType<FlowCodec["encode"]>["out"]; kind: ReturnType<FlowCodec["encode"]>["kind"] } {
    const seq = this.seqs[id]!;
    this.seqs[id] = seq + 1;
    const { out, kind } = this.flow!.encode(id, seq);
    this.register(id, seq, intendedUs, kind.reply !== false);
    return { seq, out, kind };
  }

  private register(id: number, seq: number, intendedUs: number, awaits: boolean): void {
    if (id === this.canaryId) {
      this.canaryTracker!.add(id, seq, intendedUs);
      this.recorder.increment(COUNTERS.canarySent);
      this.totals.canary!.sent++;
    } else {
      if (this.roles.echo && awaits) this.tracker.add(id, seq, intendedUs);
      const expected = awaits ? (this.deliveries?.sent(id, seq, intendedUs) ?? 0) : 0;
      if (expected > 0) {
        this.recorder.increment(COUNTERS.deliveriesExpected, expected);
        this.totals.deliveries!.expected += expected;
      }
      this.recorder.increment(COUNTERS.sent);
      this.totals.sent++;
    }
  }

  /** Whatever arrived on connection `id`: a round trip, a delivery, or a protocol error. */
  received(id: number, data: Buffer | string, nowUs: number): void {
    this.first(id, nowUs);
    const msg = decodeMessage(data);
    this.settle(id, msg, msg !== null && this.deliveries !== undefined && decodeShardTag(data as Buffer) !== this.shardTag, nowUs, data);
  }

  /** Flows: a message of `event` arrived on connection `id`; matched to what it answers, or counted unmatched. */
  receivedEvent(id: number, event: string | undefined, data: unknown, nowUs: number): void {
    this.first(id, nowUs);
    let counter = this.eventCounter.get(event);
    if (counter === undefined) this.eventCounter.set(event, (counter = EVENT_PREFIX + (event ?? "message")));
    this.recorder.increment(counter);
    const match = this.flow!.match(id, event, data);
    if (match) return this.settle(id, match, match.remote, nowUs, data);
    const stamp = this.flow!.pushStamp(event, data);
    if (stamp !== undefined) return this.push(stamp);
    this.recorder.increment(COUNTERS.unmatched);
    const name = event ?? "message";
    this.recorder.increment(UNMATCHED_PREFIX + name);
    const taken = this.samplesTaken.get(name) ?? 0;
    if (taken < this.sampleLimit) {
      this.samplesTaken.set(name, taken + 1);
      this.samples.push({ event: name, data: sampleText(data) });
    }
  }

  /**
   * An error of `errorClass`, counted as `errors.<class>`; `text` says what it was (close code and
   * reason, HTTP status, the server's words) and is kept while the class has fewer than
   * ERROR_SAMPLES_PER_CLASS distinct ones, so a shard sends a few per class in its whole run.
   */
  error(errorClass: string, text: string): void {
    this.recorder.increment(ERROR_PREFIX + errorClass);
    let seen = this.errorTexts.get(errorClass);
    if (!seen) this.errorTexts.set(errorClass, (seen = []));
    if (seen.length >= ERROR_SAMPLES_PER_CLASS) return;
    const data = text.length > ERROR_SAMPLE_CHARS ? `${text.slice(0, ERROR_SAMPLE_CHARS)}…` : text;
    if (seen.includes(data)) return;
    seen.push(data);
    this.samples.push({ event: errorClass, data, kind: "error" });
  }

  /** Server push with the server's send stamp: timed on the wall clock (both clocks' offset included). */
  private push(stampUs: number): void {
    this.recorder.increment(COUNTERS.pushReceived);
    const latencyUs = Date.now() * 1000 - stampUs;
    if (latencyUs < 0) this.recorder.increment(COUNTERS.pushClockAhead);
    else this.recorder.recordMicros(HISTOGRAMS.pushLatency, latencyUs);
  }

  /** Flows: the acknowledgement of message `seq` of connection `id` (its reply). */
  acked(id: number, seq: number, nowUs: number): void {
    this.first(id, nowUs);
    this.settle(id, { connId: id, seq, remote: false }, false, nowUs);
  }

  /** A connection's first message: the time from its open. */
  private first(id: number, nowUs: number): void {
    const opened = this.openedAt[id]!;
    if (opened >= 0) {
      this.recorder.recordMicros(HISTOGRAMS.firstMessage, nowUs - opened);
      this.openedAt[id] = -1;
    }
  }

  /** `raw`: what arrived, quoted in the error sample when it answers nothing this shard sent. */
  private settle(id: number, msg: Pick<DecodedMessage, "connId" | "seq"> | FlowMatch | null, remote: boolean, nowUs: number, raw?: unknown): void {
    if (msg && this.deliveries) {
      if (remote) return this.remoteDelivery();
      if (msg.connId !== id) return this.delivery(id, msg, nowUs, raw);
      // The server's copy to its own sender, which this scenario does not time (groups, broadcast without echo).
      if (!this.roles.echo) return;
    }
    if (id === this.canaryId) return this.canaryReply(id, msg, nowUs, raw);
    const intended = msg && msg.connId === id ? this.tracker.resolve(id, msg.seq) : REPLY.unknown;
    if (intended >= 0) {
      const newest = this.newestReply[id] ?? -1;
      if (msg!.seq < newest) this.recorder.increment(COUNTERS.outOfOrder);
      else this.newestReply[id] = msg!.seq;
      this.recorder.recordMicros(this.latencyName, nowUs - intended);
      const kind = this.flow?.kindName(id, msg!.seq);
      if (kind !== undefined) this.recorder.recordMicros(`${HISTOGRAMS.messageLatency}.${kind}`, nowUs - intended);
      this.recorder.increment(COUNTERS.received);
      this.totals.received++;
    } else if (intended === REPLY.duplicate) {
      this.recorder.increment(COUNTERS.duplicated);
      this.totals.duplicated++;
    } else if (intended === REPLY.unknown) {
      this.error("protocol", unknownReplyText(raw));
    }
    // REPLY.late: already counted lost at its deadline; counting it again would double-count.
  }

  /** We are closing connection `id` (a falling stage): it sends no more and expects no delivery of later messages. */
  retire(id: number): void {
    this.deliveries?.retire(id);
  }

  /** Replies and deliveries connection `id` still awaits. */
  outstandingFor(id: number): number {
    return this.tracker.outstandingFor(id) + (this.deliveries?.outstandingFor(id) ?? 0);
  }

  /** Ages (µs at `nowUs`) of the round trips, or else the deliveries, still awaited. */
  awaitedAges(nowUs: number, roundTrip: boolean): number[] {
    const ages: number[] = [];
    const add = (intendedUs: number) => void ages.push(nowUs - intendedUs);
    if (roundTrip) this.tracker.forEachAwaited(add);
    else this.deliveries?.forEachAwaited(add);
    return ages;
  }

  /** A connection is gone: what it awaited (replies, deliveries to it) is lost. */
  closed(id: number): void {
    this.flow?.forget(id);
    if (id === this.canaryId) this.canaryLost(this.canaryTracker!.abandonConnection(id));
    else this.lost(this.tracker.abandonConnection(id));
    if (this.deliveries) this.deliveriesLost(this.deliveries.leave(id));
  }

  /** Counts everything past its deadline as lost. */
  expire(nowUs: number): void {
    this.lost(this.tracker.expire(nowUs));
    if (this.deliveries) this.deliveriesLost(this.deliveries.expire(nowUs));
    if (this.canaryTracker) this.canaryLost(this.canaryTracker.expire(nowUs));
  }

  /** The wait is over: everything still awaited is lost. */
  abandonAll(): void {
    this.lost(this.tracker.abandonAll());
    if (this.deliveries) this.deliveriesLost(this.deliveries.abandonAll());
    if (this.canaryTracker) this.canaryLost(this.canaryTracker.abandonAll());
  }

  private delivery(receiver: number, msg: Pick<DecodedMessage, "connId" | "seq"> & { tick?: number }, nowUs: number, raw?: unknown): void {
    const out = this.deliveryOut;
    const intended = this.deliveries!.deliver(receiver, msg.connId, msg.seq, out, msg.tick);
    if (intended === DELIVERY.preJoin) {
      // The server had the receiver in the room before Volley counted it in (a flow joins during its
      // setup) and the message's other deliveries were all in: a delivery made, counted, not timed.
      this.recorder.increment(COUNTERS.deliveriesExpected);
      this.recorder.increment(COUNTERS.deliveriesReceived);
      this.totals.deliveries!.expected++;
      this.totals.deliveries!.received++;
      return;
    }
    if (intended >= 0) {
      if (out.extra) {
        // It joined after the send, yet the server already had it in the room: expected after all.
        this.recorder.increment(COUNTERS.deliveriesExpected);
        this.totals.deliveries!.expected++;
      }
      if (out.outOfOrder) this.recorder.increment(COUNTERS.deliveriesOutOfOrder);
      this.recorder.recordMicros(HISTOGRAMS.deliveryLatency, nowUs - intended);
      this.recorder.increment(COUNTERS.deliveriesReceived);
      this.totals.deliveries!.received++;
    } else if (intended === DELIVERY.duplicate) {
      this.recorder.increment(COUNTERS.deliveriesDuplicated);
    } else if (intended === DELIVERY.lateJoiner) {
      // Sent before the receiver joined: the server's fan-out was right, but it was never expected.
      this.recorder.increment(COUNTERS.deliveriesLateJoiner);
    } else if (intended === DELIVERY.unknown) {
      this.error("protocol", unknownReplyText(raw));
    }
  }

  /** Another shard's message in a shared room: counted, not timed (its monotonic clock is not ours). */
  private remoteDelivery(): void {
    this.recorder.increment(COUNTERS.deliveriesReceived);
    this.recorder.increment(COUNTERS.deliveriesRemote);
    this.totals.deliveries!.received++;
    this.totals.deliveries!.remote++;
  }

  private canaryReply(id: number, msg: Pick<DecodedMessage, "connId" | "seq"> | null, nowUs: number, raw?: unknown): void {
    const intended = msg && msg.connId === id ? this.canaryTracker!.resolve(id, msg.seq) : REPLY.unknown;
    if (intended >= 0) {
      this.recorder.recordMicros(HISTOGRAMS.canaryLatency, nowUs - intended);
      this.recorder.increment(COUNTERS.canaryReceived);
      this.totals.canary!.received++;
    } else if (intended === REPLY.unknown) {
      this.error("protocol", unknownReplyText(raw));
    }
  }

  private lost(n: number): void {
    if (n === 0) return;
    this.recorder.increment(COUNTERS.lost, n);
    this.totals.lost += n;
  }

  private deliveriesLost(n: number): void {
    if (n === 0) return;
    this.recorder.increment(COUNTERS.deliveriesLost, n);
    this.totals.deliveries!.lost += n;
  }

  private canaryLost(n: number): void {
    if (n === 0) return;
    this.recorder.increment(COUNTERS.canaryLost, n);
    this.totals.canary!.lost += n;
  }
}

/** A message that answers nothing sent: Volley's own binary frames are not text, anything else is quoted. */
function unknownReplyText(raw: unknown): string {
  if (raw === undefined) return "a message that answers nothing sent";
  if (Buffer.isBuffer(raw)) return `a message that answers nothing sent (${raw.length} bytes)`;
  return `a message that answers nothing sent: ${sampleText(raw, 200)}`;
}
