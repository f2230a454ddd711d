import { describe, expect, it } from "vitest";
import { planSchema } from "@volley/contracts";
import { AdmissionRefusal } from "./admission-refusal";
import { assertAllowlisted, assertPublicAddresses, assertWithinQuotas, planLoad, resolveTarget, targetHost } from "./target-policy";
import { thrown } from "./test-support/thrown";

const plan = (over: Record<string, unknown> = {}) =>
  planSchema.parse({
    name: "p",
    target: { url: "ws://127.0.0.1:9001/echo" },
    connections: { count: 100, rate: 50 },
    scenario: { kind: "echo", message: { rate: 10 }, duration: "60s" },
    ...over,
  });

const refusal = (fn: () => unknown) => thrown(AdmissionRefusal, fn);

describe("target policy", () => {
  it("resolves names with the system resolver and takes literal addresses as they are", async () => {
    expect(await resolveTarget("localhost")).toEqual(expect.arrayContaining([expect.stringMatching(/^(127\.0\.0\.1|::1)$/)]));
    expect(await resolveTarget("10.1.2.3")).toEqual(["10.1.2.3"]);
    expect(targetHost("ws://[::1]:9001/x")).toBe("::1");
    await expect(resolveTarget("no-such-host.invalid")).rejects.toMatchObject({ status: 400, issues: [{ path: "plan.target.url" }] });
  });

  it("hosted: refuses private, loopback, link-local and mapped addresses, after resolution", () => {
    for (const a of [
      "127.0.0.1",
      "10.0.0.5",
      "192.168.1.1",
      "172.16.0.1",
      "169.254.169.254",
      "::1",
      "fe80::1",
      "fc00::1",
      "::ffff:10.0.0.1",
      "0.0.0.0",
      "100.64.0.1",
    ]) {
      const err = refusal(() => assertPublicAddresses("evil.example", [a]));
      expect(err.status, a).toBe(403);
      expect(err.message).toContain(a);
    }
    expect(() => assertPublicAddresses("example.com", ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"])).not.toThrow();
    // Literal IPv6 URLs that carry a private IPv4 address, as a plan or webhook names them (issue 31).
    for (const url of [
      "http://[::169.254.169.254]/",
      "ws://[::10.0.0.1]:9001/",
      "http://[::192.168.1.1]/",
      "http://[::127.0.0.1]/",
      "http://[64:ff9b::a9fe:a9fe]/",
    ]) {
      const host = targetHost(url);
      expect(refusal(() => assertPublicAddresses(host, [host])).status, url).toBe(403);
    }
    // One private address among public ones is enough to refuse (DNS rebinding picks any of them).
    expect(() => assertPublicAddresses("mixed.example", ["93.184.215.14", "10.0.0.1"])).toThrow(/10\.0\.0\.1/);
  });

  it("self-hosted: loopback always, everything else only when the allowlist says so", () => {
    expect(() => assertAllowlisted("localhost", ["127.0.0.1", "::1"], [])).not.toThrow();
    const err = refusal(() => assertAllowlisted("api.internal", ["10.0.0.7"], []));
    expect(err).toMatchObject({ status: 403, code: "target_refused" });
    expect(err.message).toContain("VOLLEY_TARGET_ALLOWLIST");
    expect(() => assertAllowlisted("api.internal", ["10.0.0.7"], ["10.0.0.0/8"])).not.toThrow();
    expect(() => assertAllowlisted("api.example.com", ["93.184.215.14"], ["*.example.com"])).not.toThrow();
    expect(() => assertAllowlisted("example.com", ["93.184.215.14"], ["*.example.com"])).not.toThrow();
    expect(() => assertAllowlisted("badexample.com", ["93.184.215.14"], ["*.example.com"])).toThrow();
    expect(() => assertAllowlisted("api.internal", ["10.0.0.7"], ["api.internal"])).not.toThrow();
    expect(() => assertAllowlisted("x", ["10.0.0.7"], ["10.0.0.7"])).not.toThrow();
    expect(() => assertAllowlisted("x", ["fd00::7"], ["10.0.0.0/8"])).toThrow();
    expect(() => assertAllowlisted("anything", ["8.8.8.8"], ["*"])).not.toThrow();
  });

  it("measures a plan's load and holds it to the quotas, naming what is over", () => {
    expect(planLoad(plan())).toEqual({ connections: 100, messagesPerSecond: 1000, durationSeconds: 62 });
    expect(
      planLoad(plan({ scenario: { kind: "echo", message: { rate: 500, per: "aggregate" }, duration: "10s" }, sweep: { step: 100, steps: 5 } }))
        .messagesPerSecond,
    ).toBe(900);
    expect(
      planLoad(
        plan({
          connections: {
            count: 10,
            stages: [
              { duration: "20s", target: 10 },
              { duration: "10s", target: 0 },
            ],
          },
        }),
      ).durationSeconds,
    ).toBe(30);
    // How long the plan runs is the engine's: a sweep lasts its steps (5 × 3 s holds with 1 s gaps after a 2 s ramp), not its whole duration cap;
    // per aggregate sends for duration from the first open while the 100 s ramp goes on.
    expect(
      planLoad(
        plan({ scenario: { kind: "echo", message: { rate: 500, per: "aggregate" }, duration: "1h" }, sweep: { step: 100, steps: 5, hold: "3s", gap: "1s" } }),
      ).durationSeconds,
    ).toBe(2 + 19);
    expect(
      planLoad(plan({ connections: { count: 1000, rate: 10 }, scenario: { kind: "echo", message: { rate: 500, per: "aggregate" }, duration: "60s" } }))
        .durationSeconds,
    ).toBe(100);
    expect(() => assertWithinQuotas(plan(), { connections: 100, messagesPerSecond: 1000, durationSeconds: 62 })).not.toThrow();
    const err = refusal(() => assertWithinQuotas(plan(), { connections: 50, messagesPerSecond: 500, durationSeconds: 30 }));
    expect(err).toMatchObject({ status: 403, code: "quota_exceeded" });
    expect(err.message).toMatch(/100 connections > 50.*1000 messages\/s in total > 500.*62 s > 30 s/);
    // Runs already queued or running count towards connections and rate, not towards a run's length.
    const crowded = refusal(() => assertWithinQuotas(plan(), { connections: 250, messagesPerSecond: 1e6, durationSeconds: 100 }, [plan(), plan()]));
    expect(crowded.message).toContain("300 connections with the 2 runs already queued or running > 250");
    expect(() => assertWithinQuotas(plan(), { connections: 300, messagesPerSecond: 1e6, durationSeconds: 100 }, [plan(), plan()])).not.toThrow();
  });
});
