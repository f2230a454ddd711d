import { describe, expect, it } from "vitest";
import { publicOnlyRequestOptions } from "./public-lookup";

describe("publicOnlyRequestOptions", () => {
  it("refuses a non-public address literal (brackets of an IPv6 one stripped) and resolves names through the public-only lookup", () => {
    expect(publicOnlyRequestOptions(new URL("http://127.0.0.1:9/x"), true)).toEqual({ refused: expect.stringMatching(/127\.0\.0\.1 .*loopback/) });
    expect(publicOnlyRequestOptions(new URL("http://[::1]/x"), true)).toEqual({ refused: expect.stringMatching(/::1 .*public addresses/) });
    expect(publicOnlyRequestOptions(new URL("http://93.184.216.34/x"), true)).toEqual({ lookup: expect.any(Function) });
    expect(publicOnlyRequestOptions(new URL("https://hooks.example.test/x"), true)).toEqual({ lookup: expect.any(Function) });
  });

  it("adds nothing when public-only is off (self-hosted reaches any address)", () => {
    expect(publicOnlyRequestOptions(new URL("http://127.0.0.1/x"), false)).toEqual({});
    expect(publicOnlyRequestOptions(new URL("http://10.0.0.1/x"), undefined)).toEqual({});
  });
});
