/** What a reply turned out to be. */
export const REPLY = { duplicate: -1, late: -2, unknown: -3 } as const;

/**
 * Messages in flight, per connection, and their deadlines. A reply resolves its message once; a
 * second reply is a duplicate; a reply after the deadline is late (already counted lost, so it is
 * ignored rather than counted twice).
 *
 * Deadlines sit in one ring in send order. The send loop sends in intended-time order, so the ring
 * is sorted by deadline and expiry only ever looks at its head: O(1) per message, whatever the
 * number of connections.
 */
export class PendingTracker {
  private pending: Map<number, number>[] = [];
  /** Bitsets of seqs counted lost, allocated on a connection's first loss. */
  private lostBits: (Uint8Array | undefined)[] = [];
  private sent: number[] = [];
  private ringConn = new Uint32Array(1024);
  private ringSeq = new Float64Array(1024);
  private ringDeadline = new Float64Array(1024);
  private head = 0;
  private length = 0;
  private total = 0;

  constructor(private readonly timeoutUs: number) {}

  /** Messages sent and neither answered nor counted lost. */
  get outstanding(): number {
    return this.total;
  }

  /** Deadline of the oldest message in flight (Infinity when none): when expiry next has work. */
  nextDeadline(): number {
    while (this.length > 0) {
      const i = this.head;
      if (this.pending[this.ringConn[i]!]?.has(this.ringSeq[i]!)) return this.ringDeadline[i]!;
      this.shift();
    }
    return Infinity;
  }

  /** Messages of connection `connId` neither answered nor counted lost. */
  outstandingFor(connId: number): number {
    return this.pending[connId]?.size ?? 0;
  }

  /** Calls `fn` with the intended send time of every message still awaited. */
  forEachAwaited(fn: (intendedUs: number) => void): void {
    for (const map of this.pending) if (map) for (const intended of map.values()) fn(intended);
  }

  /** Message `seq` of `connId` is still awaited (neither answered nor counted lost). */
  has(connId: number, seq: number): boolean {
    return this.pending[connId]?.has(seq) ?? false;
  }

  add(connId: number, seq: number, intendedUs: number): void {
    let map = this.pending[connId];
    if (!map) {
      map = new Map();
      this.pending[connId] = map;
    }
    map.set(seq, intendedUs);
    this.sent[connId] = Math.max(this.sent[connId] ?? 0, seq + 1);
    this.total++;
    if (this.length === this.ringConn.length) this.grow();
    const i = (this.head + this.length) % this.ringConn.length;
    this.ringConn[i] = connId;
    this.ringSeq[i] = seq;
    this.ringDeadline[i] = intendedUs + this.timeoutUs;
    this.length++;
  }

  /** The intended send time of the answered message, or one of REPLY's negative codes. */
  resolve(connId: number, seq: number): number {
    const map = this.pending[connId];
    const intended = map?.get(seq);
    if (intended !== undefined) {
      map!.delete(seq);
      this.total--;
      return intended;
    }
    if (!Number.isInteger(seq) || seq < 0 || seq >= (this.sent[connId] ?? 0)) return REPLY.unknown;
    return this.isLost(connId, seq) ? REPLY.late : REPLY.duplicate;
  }

  /** Counts every message whose deadline has passed as lost; returns how many. */
  expire(nowUs: number): number {
    let lost = 0;
    while (this.length > 0 && this.ringDeadline[this.head]! <= nowUs) {
      const connId = this.ringConn[this.head]!;
      const seq = this.ringSeq[this.head]!;
      this.shift();
      if (this.pending[connId]?.delete(seq)) {
        this.markLost(connId, seq);
        this.total--;
        lost++;
      }
    }
    return lost;
  }

  /** A connection is gone: its messages in flight will never be answered. Returns how many. */
  abandonConnection(connId: number): number {
    const map = this.pending[connId];
    if (!map) return 0;
    for (const seq of map.keys()) this.markLost(connId, seq);
    const n = map.size;
    map.clear();
    this.total -= n;
    return n;
  }

  /** Every message still in flight counts lost (the wait for replies is over). Returns how many. */
  abandonAll(): number {
    let n = 0;
    for (let c = 0; c < this.pending.length; c++) n += this.abandonConnection(c);
    return n;
  }

  private shift(): void {
    this.head = (this.head + 1) % this.ringConn.length;
    this.length--;
  }

  private grow(): void {
    const size = this.ringConn.length * 2;
    const conn = new Uint32Array(size),
      seq = new Float64Array(size),
      deadline = new Float64Array(size);
    for (let k = 0; k < this.length; k++) {
      const i = (this.head + k) % this.ringConn.length;
      conn[k] = this.ringConn[i]!;
      seq[k] = this.ringSeq[i]!;
      deadline[k] = this.ringDeadline[i]!;
    }
    this.ringConn = conn;
    this.ringSeq = seq;
    this.ringDeadline = deadline;
    this.head = 0;
  }

  private markLost(connId: number, seq: number): void {
    const byte = Math.floor(seq / 8);
    let bits = this.lostBits[connId];
    if (!bits || bits.length <= byte) {
      const grown = new Uint8Array(Math.max(64, (byte + 1) * 2));
      if (bits) grown.set(bits);
      bits = grown;
      this.lostBits[connId] = bits;
    }
    bits[byte]! |= 1 << (seq % 8);
  }

  private isLost(connId: number, seq: number): boolean {
    const bits = this.lostBits[connId];
    const byte = Math.floor(seq / 8);
    return bits !== undefined && byte < bits.length && (bits[byte]! & (1 << (seq % 8))) !== 0;
  }
}
