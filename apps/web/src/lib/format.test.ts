import { describe, expect, it } from "vitest";
import { fmtMsgRate } from "./format";

describe("fmtMsgRate", () => {
  it("never shows a planned fractional rate as 0 msg/s", () => {
    expect([1700, 12.25, 1, 0.3333, 0.1667, 0.05].map(fmtMsgRate)).toEqual(["1,700 msg/s", "12.3 msg/s", "1 msg/s", "1 msg every 3 s", "1 msg every 6 s", "1 msg every 20 s"]);
  });
});
