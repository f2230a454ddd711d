/**
 * The wire layout of every load message, binary and fixed-size so the echo returns it untouched:
 *
 *   offset  size  field
 *   0       4     magic "VLY1" (rejects foreign frames cheaply)
 *   4       4     connection id (uint32, index within the shard)
 *   8       8     sequence number per connection (float64: exact integers up to 2^53)
 *   16      8     intended send time, monotonic µs (float64, sub-µs precision)
 *   24      4     shard tag (uint32): tells this shard's messages from other shards' in a shared room
 *   28      4     send tick (uint32): places the send among room joins (DeliveryTracker); 0 without rooms
 *   32..    -     zero padding up to the plan's message size
 *
 * Big-endian so a packet capture reads naturally. The intended (not actual) send time travels in
 * the message so latency includes any lateness of the sender: no coordinated omission.
 */
export const MESSAGE_HEADER_BYTES = 32;
const MAGIC = 0x564c5931;

export interface DecodedMessage {
  connId: number;
  seq: number;
  intendedUs: number;
  /** The delivery tracker's tick at the send (0 when the scenario has no rooms). */
  tick: number;
}

export function encodeMessage(connId: number, seq: number, intendedUs: number, bytes: number, shardTag = 0, tick = 0): Buffer {
  const buf = Buffer.alloc(Math.max(bytes, MESSAGE_HEADER_BYTES));
  buf.writeUInt32BE(MAGIC, 0);
  buf.writeUInt32BE(connId >>> 0, 4);
  buf.writeDoubleBE(seq, 8);
  buf.writeDoubleBE(intendedUs, 16);
  buf.writeUInt32BE(shardTag >>> 0, 24);
  buf.writeUInt32BE(tick >>> 0, 28);
  return buf;
}

/**
 * The shard tag of a message decodeMessage accepted. Connection ids and monotonic times are only
 * meaningful within the shard that sent them, so a delivery is timed only when the tag is ours.
 */
export function decodeShardTag(data: Buffer): number {
  return data.readUInt32BE(24);
}

/** Null for anything that is not one of our messages (wrong size, magic, or a text frame). */
export function decodeMessage(data: Buffer | string): DecodedMessage | null {
  if (typeof data === "string" || data.length < MESSAGE_HEADER_BYTES) return null;
  if (data.readUInt32BE(0) !== MAGIC) return null;
  return { connId: data.readUInt32BE(4), seq: data.readDoubleBE(8), intendedUs: data.readDoubleBE(16), tick: data.readUInt32BE(28) };
}
