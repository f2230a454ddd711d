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

  it("judges every IPv6 form that carries an IPv4 address as that address (mapped, compatible, NAT64, 6to4, Teredo)", () => {
    // The forms issue 31 found accepted as public, and their siblings.
    for (const a of [
      "::169.254.169.254",
      "::a9fe:a9fe",
      "::10.0.0.1",
      "::192.168.1.1",
      "::127.0.0.1",
      "::ffff:169.254.169.254",
      "64:ff9b::10.0.0.1",
      "64:ff9b::a9fe:a9fe",
      "2002:a9fe:a9fe::1",
      "2002:7f00:1::",
      "2002:c0a8:101::5",
      // Teredo: client 10.0.0.1 stored inverted (f5ff:fffe).
      "2001:0:4136:e378:8000:63bf:f5ff:fffe",
    ]) {
      expect(isPublicAddress(a), a).toBe(false);
    }
    expect(addressRange("::169.254.169.254")).toBe("linkLocal");
    expect(addressRange("2002:7f00:1::")).toBe("loopback");
    expect(addressRange("2001:0:4136:e378:8000:63bf:f5ff:fffe")).toBe("private");
    // The same forms around a public IPv4 address are public; the plain IPv6 specials stay what they are.
    for (const a of ["::8.8.8.8", "64:ff9b::8.8.8.8", "2002:808:808::1", "2001:0:4136:e378:8000:63bf:f7f7:f7f7"]) expect(isPublicAddress(a), a).toBe(true);
    expect(addressRange("::")).toBe("unspecified");
    expect(addressRange("::1")).toBe("loopback");
    // The allowlist matches them by the address they reach, too.
    expect(addressMatches("10.0.0.0/8", "::10.0.0.1")).toBe(true);
    expect(addressMatches("169.254.169.254", "64:ff9b::a9fe:a9fe")).toBe(true);
  });

  it("matches addresses and CIDR ranges, and nothing for junk", () => {
    expect(addressMatches("10.0.0.0/8", "10.2.3.4")).toBe(true);
    expect(addressMatches("10.0.0.0/8", "11.2.3.4")).toBe(false);
    expect(addressMatches("10.0.0.0/8", "::1")).toBe(false);
    expect(addressMatches("::ffff:10.0.0.5", "10.0.0.5")).toBe(true);
    expect(addressMatches("nonsense/99", "10.0.0.5")).toBe(false);
  });
});
