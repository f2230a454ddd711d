import { describe, expect, it } from "vitest";
import { fmtMsgRate, fmtRate, fmtRateValue } from "./format";

describe("fmtMsgRate", () => {
  it("never shows a planned fractional rate as 0 msg/s", () => {
    expect([1700, 12.25, 1, 0.3333, 0.1667, 0.05].map(fmtMsgRate)).toEqual([
      "1,700 msg/s",
      "12.3 msg/s",
      "1 msg/s",
      "1 msg every 3 s",
      "1 msg every 6 s",
      "1 msg every 20 s",
    ]);
  });
});

describe("fmtRate", () => {
  it("keeps two significant digits below one a second instead of rounding to 0/s", () => {
    expect([5500, 99.96, 12.25, 1, 0.333, 0.04, 0.0049, 0].map(fmtRate)).toEqual(["5,500/s", "100/s", "12.3/s", "1/s", "0.33/s", "0.04/s", "0.0049/s", "0/s"]);
  });

  it("gives the number alone for a column or sentence that names the unit (no '5,500/s msg/s')", () => {
    expect(fmtRateValue(5500)).toBe("5,500");
    expect(fmtRateValue(0.25)).toBe("0.25");
    expect(fmtRateValue(null)).toBe("—");
  });
});
