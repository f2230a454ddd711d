import { spawnSync } from "node:child_process";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { authSecret, MisconfiguredError } from "./env";

// AUTH_SECRET is required in every mode: nothing derives one (it was derived from DATABASE_URL,
// which anyone who knew the database URL could then sign session cookies with).

const saved = { AUTH_SECRET: process.env.AUTH_SECRET, DATABASE_URL: process.env.DATABASE_URL, VOLLEY_MODE: process.env.VOLLEY_MODE };
afterEach(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

describe("authSecret", () => {
  it("refuses a self-hosted install without AUTH_SECRET, naming it and how to make one, though DATABASE_URL is set", () => {
    delete process.env.AUTH_SECRET;
    delete process.env.VOLLEY_MODE;
    process.env.DATABASE_URL = "postgres://postgres@127.0.0.1:5432/volley";
    expect(() => authSecret()).toThrow(MisconfiguredError);
    expect(() => authSecret()).toThrow(/^AUTH_SECRET is not set — .*openssl rand -base64 32/);
  });

  it("refuses one shorter than 32 characters and returns a good one as given", () => {
    process.env.AUTH_SECRET = "too-short";
    expect(() => authSecret()).toThrow(/AUTH_SECRET must be at least 32 characters/);
    process.env.AUTH_SECRET = "a-good-auth-secret-of-more-than-32-characters";
    expect(authSecret()).toBe("a-good-auth-secret-of-more-than-32-characters");
  });

  it("stops web's server at start when AUTH_SECRET is unset, saying why", () => {
    const appDir = path.resolve(import.meta.dirname, "..");
    const res = spawnSync(process.execPath, ["--import", "tsx", path.join(appDir, "server.ts")], {
      cwd: appDir,
      // Port 0: were it to start after all, it would take no port anyone uses.
      env: {
        PATH: process.env.PATH,
        NODE_ENV: "production",
        DATABASE_URL: "postgres://postgres@127.0.0.1:5432/volley",
        WEB_PORT: "0",
        WEB_HOST: "127.0.0.1",
        LOG_LEVEL: "silent",
      },
      encoding: "utf8",
      timeout: 90_000,
    });
    expect(res.status, `${res.stdout}${res.stderr}`).toBe(1);
    expect(res.stderr).toMatch(/web could not start: AUTH_SECRET is not set/);
  });
});
