import { mkdtempSync, readFileSync, rmSync, statSync, chmodSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { installSecrets } from "./install-secrets";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const dataDir = () => {
  const d = mkdtempSync(path.join(tmpdir(), "volley-secrets-"));
  dirs.push(d);
  return path.join(d, ".volley");
};

describe("install secrets (npm run setup / npm start)", () => {
  it("generates AUTH_SECRET, VOLLEY_SECRETS_KEY and the bootstrap AGENT_TOKEN into the data directory, readable by the owner only, and reuses them", () => {
    const dir = dataDir();
    const lines: string[] = [];
    const first = installSecrets(dir, (l) => lines.push(l));
    expect(lines).toHaveLength(3);
    expect(first.authSecret.length).toBeGreaterThanOrEqual(32);
    expect(Buffer.from(first.secretsKey, "base64")).toHaveLength(32);
    expect(first.authSecret).not.toBe(first.secretsKey);
    expect(first.agentToken.length).toBeGreaterThanOrEqual(32);
    expect(new Set([first.authSecret, first.secretsKey, first.agentToken]).size).toBe(3);
    for (const [file, value] of [
      ["auth-secret", first.authSecret],
      ["secrets-key", first.secretsKey],
      ["agent-token", first.agentToken],
    ] as const) {
      expect(readFileSync(path.join(dir, file), "utf8").trim()).toBe(value);
      expect(statSync(path.join(dir, file)).mode & 0o777).toBe(0o600);
    }
    // The next start keeps them: sessions and sealed webhook secrets survive restarts.
    const again = installSecrets(dir, (l) => lines.push(l));
    expect(again).toEqual(first);
    expect(lines).toHaveLength(3);
    // Another install gets its own.
    const other = installSecrets(dataDir());
    expect(other.authSecret).not.toBe(first.authSecret);
    expect(other.agentToken).not.toBe(first.agentToken);
  });

  it("tightens a file left readable by others, and refuses (never replaces) a damaged key", () => {
    const dir = dataDir();
    const first = installSecrets(dir);
    chmodSync(path.join(dir, "auth-secret"), 0o644);
    expect(installSecrets(dir)).toEqual(first);
    expect(statSync(path.join(dir, "auth-secret")).mode & 0o777).toBe(0o600);
    writeFileSync(path.join(dir, "secrets-key"), "not-a-key\n");
    expect(() => installSecrets(dir)).toThrow(/secrets-key does not hold a valid secret — restore it/);
    expect(readFileSync(path.join(dir, "secrets-key"), "utf8")).toBe("not-a-key\n");
  });
});
