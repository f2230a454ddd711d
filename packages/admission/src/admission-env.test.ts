import { describe, expect, it } from "vitest";
import { AdmissionEnvError, parseAdmissionEnv, parseQuota, parseTargetAllowlist } from "./admission-env";
import { DEFAULT_QUOTAS } from "./target-policy";
import { thrown } from "./test-support/thrown";

const envError = (fn: () => unknown) => thrown(AdmissionEnvError, fn);

describe("admission env", () => {
  it("takes the defaults when unset or empty", () => {
    expect(parseAdmissionEnv({})).toEqual({ allowlist: [], quotas: DEFAULT_QUOTAS });
    expect(parseAdmissionEnv({ VOLLEY_TARGET_ALLOWLIST: " ", VOLLEY_QUOTA_RATE: "" })).toEqual({ allowlist: [], quotas: DEFAULT_QUOTAS });
  });

  it("reads quotas and every kind of allowlist entry, lower case", () => {
    expect(
      parseAdmissionEnv({
        VOLLEY_TARGET_ALLOWLIST: " API.example.com, *.staging.example.com,10.0.0.0/8 , 192.168.1.5,fd00::/8,::1,localhost,*,",
        VOLLEY_QUOTA_CONNECTIONS: "100",
        VOLLEY_QUOTA_RATE: " 2000 ",
        VOLLEY_QUOTA_DURATION: "60",
      }),
    ).toEqual({
      allowlist: ["api.example.com", "*.staging.example.com", "10.0.0.0/8", "192.168.1.5", "fd00::/8", "::1", "localhost", "*"],
      quotas: { connections: 100, messagesPerSecond: 2000, durationSeconds: 60 },
    });
  });

  it.each(["abc", "0", "-5", "1.5", "1e400", "10 000"])("refuses VOLLEY_QUOTA_RATE=%j, naming it and the fix", (value) => {
    const err = envError(() => parseAdmissionEnv({ VOLLEY_QUOTA_RATE: value }));
    expect(err.variable).toBe("VOLLEY_QUOTA_RATE");
    expect(err.message).toContain(`VOLLEY_QUOTA_RATE=${JSON.stringify(value)}`);
    expect(err.problem).toMatch(/whole number ≥ 1 — set it to .*VOLLEY_QUOTA_RATE=50000.*unset it for the default 50000/);
  });

  it("names each quota variable", () => {
    expect(envError(() => parseQuota("VOLLEY_QUOTA_CONNECTIONS", "many")).variable).toBe("VOLLEY_QUOTA_CONNECTIONS");
    expect(envError(() => parseQuota("VOLLEY_QUOTA_DURATION", "30m")).message).toMatch(/^VOLLEY_QUOTA_DURATION="30m": .*seconds/);
  });

  it.each(["http://api.example.com", "api.example.com:8080", "10.0.0.0/33", "not a host", "*.", "example..com", "[::1]", "*.*.example.com"])(
    "refuses the allowlist entry %j, naming the variable, the entry and the form",
    (entry) => {
      const err = envError(() => parseTargetAllowlist(`localhost,${entry}`));
      expect(err.variable).toBe("VOLLEY_TARGET_ALLOWLIST");
      expect(err.problem).toContain(`the entry ${JSON.stringify(entry.toLowerCase())} is not a host name, *.suffix, address or CIDR range`);
      expect(err.problem).toContain("e.g. VOLLEY_TARGET_ALLOWLIST=");
    },
  );
});
