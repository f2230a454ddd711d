import { describe, expect, it } from "vitest";
import { addressMatches, addressRange, isPublicAddress, nonPublicReason } from "./address-range";

describe("address classifier", () => {
  it("counts only public unicast as public, IPv4-mapped IPv6 classified as the IPv4 inside", () => {
    const notPublic = [
      "10.1.2.3",
      "172.16.0.1",
      "192.168.1.1",
      "127.0.0.1",
      "127.9.9.9",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "224.0.0.1",
      "::1",
      "::",
      "fe80::1",
      "fc00::1",
      "fd12::1",
      "::ffff:127.0.0.1",
      "::ffff:10.0.0.1",
      "not-an-ip",
    ];
    for (const a of notPublic) expect(isPublicAddress(a), a).toBe(false);
    for (const a of ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"]) expect(isPublicAddress(a), a).toBe(true);
    expect(addressRange("169.254.169.254")).toBe("linkLocal");
    expect(nonPublicReason("metadata.example", "169.254.169.254")).toMatch(/metadata\.example resolves to 169\.254\.169\.254 \(linkLocal\)/);
  });

  it("matches addresses and CIDR ranges, and nothing for junk", () => {
    expect(addressMatches("10.0.0.0/8", "10.2.3.4")).toBe(true);
    expect(addressMatches("10.0.0.0/8", "11.2.3.4")).toBe(false);
    expect(addressMatches("10.0.0.0/8", "::1")).toBe(false);
    expect(addressMatches("::ffff:10.0.0.5", "10.0.0.5")).toBe(true);
    expect(addressMatches("nonsense/99", "10.0.0.5")).toBe(false);
  });
});
