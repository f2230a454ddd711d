import { describe, expect, it } from "vitest";
import { decodeMessage, encodeMessage, MESSAGE_HEADER_BYTES } from "./message-codec";

describe("message codec", () => {
  it("round-trips id, sequence, intended time and send tick, padded to the plan size", () => {
    const buf = encodeMessage(4_000_000_000, 2 ** 40 + 3, 123_456_789.125, 64, 7, 2 ** 32 - 1);
    expect(buf.length).toBe(64);
    expect(decodeMessage(buf)).toEqual({ connId: 4_000_000_000, seq: 2 ** 40 + 3, intendedUs: 123_456_789.125, tick: 2 ** 32 - 1 });
  });

  it("never goes below the header size", () => {
    expect(encodeMessage(1, 1, 1, 8).length).toBe(MESSAGE_HEADER_BYTES);
  });

  it("rejects text, short and foreign frames", () => {
    expect(decodeMessage("hello")).toBeNull();
    expect(decodeMessage(Buffer.alloc(16))).toBeNull();
    expect(decodeMessage(Buffer.alloc(64))).toBeNull();
  });
});
