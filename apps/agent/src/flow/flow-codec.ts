import type { TemplateContext } from "@volley/contracts";
import type { OutMessage } from "../drivers/driver";
import type { CompiledKind, CompiledMatch, FlowProgram } from "./flow-program";

/** A matched reply: the message it answers, and whether that message came from another shard. */
export interface FlowMatch {
  connId: number;
  seq: number;
  remote: boolean;
}

/** What an incoming message matched nothing as: counted per event, a few kept as samples. */
export const UNMATCHED = null;

/** What a decoder returns for a message that is not a value (not JSON, bytes that do not decode). */
export const NO_JSON = Symbol("not JSON");

/**
 * A shard's flow messages: renders each from its kind's template with the connection's context,
 * and tells, for each incoming message, which sent message (connection, sequence) it answers.
 *
 * - Matched by id (`equals: "{{ msg.id }}"`): the id names shard, connection and sequence, so a
 *   reply in any order, or a broadcast copy on another receiver, resolves exactly.
 * - Matched by another value: the value each message was sent with, per connection.
 * - By event only: the connection's oldest message of that kind still awaited (a server that
 *   answers in order).
 *
 * Ids are `<shard tag>.<connection>.<seq>` in base 36: short, unique in the run, and a copy from
 * another shard (a shared room) is known by its tag.
 */
export class FlowCodec {
  private readonly tag: string;
  private readonly contexts: TemplateContext[] = [];
  /** Per kind with a value match, per connection: value → seq. */
  private readonly byValue = new Map<CompiledKind, Map<string, number>[]>();
  /** Per kind matched in order, per connection: seqs awaiting, oldest first. */
  private readonly inOrder = new Map<CompiledKind, number[][]>();
  private readonly replyKinds: CompiledKind[];
  /** With several kinds: per connection, the kind of each message awaiting its reply (for per-kind latency). */
  private readonly kindOfSeq: (Map<number, CompiledKind> | undefined)[] | undefined;

  constructor(
    private readonly program: FlowProgram,
    shardTag: number,
    private readonly random: () => number,
    /** Still awaited (not answered, not counted lost): queues skip what expired. */
    private readonly awaited: (connId: number, seq: number) => boolean,
  ) {
    this.tag = shardTag.toString(36);
    this.replyKinds = program.kinds.filter((k) => k.reply && k.reply !== "ack");
    if (program.kinds.length > 1) this.kindOfSeq = [];
    for (const k of this.replyKinds) {
      const m = k.reply as CompiledMatch;
      if (m.equals && !m.byId) this.byValue.set(k, []);
      else if (!m.byId) this.inOrder.set(k, []);
    }
  }

  /** The connection's template context (setup fills vars; messages set msg.*). */
  context(id: number): TemplateContext | undefined {
    return this.contexts[id];
  }

  bind(id: number, ctx: TemplateContext): void {
    this.contexts[id] = ctx;
  }

  /** Renders message `seq` of connection `id`; `kind.reply` says whether (and how) to await a reply. */
  encode(id: number, seq: number): { out: OutMessage; kind: CompiledKind } {
    const kind = this.pick();
    const ctx = this.contexts[id]!;
    ctx.msgSeq = seq;
    ctx.msgId = `${this.tag}.${id.toString(36)}.${seq.toString(36)}`;
    const out = kind.render(ctx);
    if (this.kindOfSeq && kind.reply) (this.kindOfSeq[id] ??= new Map()).set(seq, kind);
    if (kind.reply && kind.reply !== "ack") {
      const m = kind.reply;
      if (m.equals && !m.byId) (this.byValue.get(kind)![id] ??= new Map()).set(m.equals(ctx), seq);
      else if (!m.byId) (this.inOrder.get(kind)![id] ??= []).push(seq);
    }
    return { out, kind };
  }

  /** The sent message an incoming one answers, or UNMATCHED. */
  match(id: number, event: string | undefined, data: unknown): FlowMatch | null {
    // Kinds usually share one codec: decode once per codec, not per kind.
    let decodedBy: CompiledMatch["decode"] | undefined;
    let parsed: unknown;
    for (const kind of this.replyKinds) {
      const m = kind.reply as CompiledMatch;
      if (m.event !== undefined && m.event !== event) continue;
      let value: unknown;
      if (m.path) {
        if (decodedBy !== m.decode) [decodedBy, parsed] = [m.decode, m.decode(data)];
        if (parsed === NO_JSON) continue;
        value = m.path(parsed);
        if (value === undefined) continue;
      }
      if (m.byId) {
        const found = typeof value === "string" ? this.fromId(value) : null;
        if (found) return found;
        continue;
      }
      if (m.equals) {
        const seqs = this.byValue.get(kind)![id];
        const key = typeof value === "string" ? value : JSON.stringify(value);
        const seq = seqs?.get(key);
        if (seq === undefined) continue;
        seqs!.delete(key);
        return { connId: id, seq, remote: false };
      }
      const queue = this.inOrder.get(kind)![id];
      while (queue && queue.length > 0) {
        const seq = queue.shift()!;
        if (this.awaited(id, seq)) return { connId: id, seq, remote: false };
      }
    }
    return UNMATCHED;
  }

  /**
   * flow.push: the server's send stamp of a message that answered nothing (epoch µs), or undefined
   * when no push rule knows it.
   */
  pushStamp(event: string | undefined, data: unknown): number | undefined {
    let parsed: unknown;
    for (const p of this.program.push) {
      if (p.event !== undefined && p.event !== event) continue;
      parsed ??= this.program.decode(data);
      if (parsed === NO_JSON) return undefined;
      const v = p.stamp(parsed);
      const n = typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" ? Number(v) : NaN;
      if (Number.isFinite(n)) return n * p.unitUs;
    }
    return undefined;
  }

  /**
   * With several kinds, the name of message (connId, seq)'s kind, once, when its reply (or its
   * first delivery) is counted; undefined with one kind. A broadcast's later deliveries are not
   * told apart by kind.
   */
  kindName(connId: number, seq: number): string | undefined {
    const kinds = this.kindOfSeq?.[connId];
    const kind = kinds?.get(seq);
    if (!kind) return undefined;
    kinds!.delete(seq);
    return kind.name;
  }

  /** Forgets a connection's queued expectations (it is gone). */
  forget(id: number): void {
    if (this.kindOfSeq) this.kindOfSeq[id] = undefined;
    for (const perConn of this.byValue.values()) perConn[id] = undefined!;
    for (const perConn of this.inOrder.values()) perConn[id] = undefined!;
  }

  private fromId(id: string): FlowMatch | null {
    const parts = id.split(".");
    if (parts.length !== 3) return null;
    const connId = parseInt(parts[1]!, 36);
    const seq = parseInt(parts[2]!, 36);
    if (!Number.isFinite(connId) || !Number.isFinite(seq)) return null;
    return { connId, seq, remote: parts[0] !== this.tag };
  }

  private pick(): CompiledKind {
    const kinds = this.program.kinds;
    if (kinds.length === 1) return kinds[0]!;
    const r = this.random() * this.program.totalWeight;
    for (const k of kinds) if (r < k.upTo) return k;
    return kinds[kinds.length - 1]!;
  }
}

/**
 * An incoming message as a JSON value: objects as they are, text and bytes parsed. Text that is
 * not JSON is the string itself (a Socket.IO event's plain string argument, a text body: `$` reads
 * it, any deeper path finds nothing); bytes that are not JSON are NO_JSON.
 */
export function asJson(data: unknown): unknown {
  if (typeof data === "string") {
    try {
      return JSON.parse(data);
    } catch {
      return data;
    }
  }
  if (Buffer.isBuffer(data)) {
    try {
      return JSON.parse(data.toString("utf8"));
    } catch {
      return NO_JSON;
    }
  }
  return data;
}

/** A sample of an unmatched message as text, cut to `max` characters (bytes that are not UTF-8 text as base64). */
export function sampleText(data: unknown, max = 500): string {
  const text = (b: Buffer) => {
    const s = b.toString("utf8");
    return s.includes("\uFFFD") ? `base64:${b.toString("base64")}` : s;
  };
  const s = typeof data === "string" ? data : Buffer.isBuffer(data) ? text(data) : (JSON.stringify(data) ?? String(data));
  return s.length > max ? `${s.slice(0, max)}…` : s;
}
