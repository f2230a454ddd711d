import { describe, expect, it } from "vitest";
import { safeNextPath } from "./next-path";

describe("safeNextPath", () => {
  it("keeps paths on this site", () => {
    expect(safeNextPath("/accept-invitation/inv_abc")).toBe("/accept-invitation/inv_abc");
    expect(safeNextPath("/runs?status=failed")).toBe("/runs?status=failed");
  });

  it("sends anything that could leave the site, or is not a string, home", () => {
    for (const bad of ["//evil.example/x", "/\\evil.example", "https://evil.example", "evil", "", "/\tx", undefined, ["/a", "/b"]]) {
      expect(safeNextPath(bad), String(bad)).toBe("/");
    }
  });
});
