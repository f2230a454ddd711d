import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import "@volley/devstack/vitest-context";
import { eq } from "drizzle-orm";
import { createDb, type DbHandle } from "../client";
import { createTestDatabase } from "../test-database";
import { DEFAULT_ORG_ID, webhooks } from "../schema";
import { isSealed, openSecret, parseSecretKeys, parseSecretsKey, SecretKeyError } from "../secret-box";
import { createWebhook, getActiveWebhook } from "./webhooks-repo";

let testDb: Awaited<ReturnType<typeof createTestDatabase>>;
let h: DbHandle;

beforeAll(async () => {
  testDb = await createTestDatabase(inject("databaseServerUrl"));
  h = createDb(testDb.url);
});
afterAll(async () => {
  await h?.close();
  await testDb?.drop();
});

const newKey = () => randomBytes(32).toString("base64");
const stored = async (id: string) => (await h.db.select().from(webhooks).where(eq(webhooks.id, id)))[0]!.secret;
const input = { orgId: DEFAULT_ORG_ID, url: "http://127.0.0.1:9/hook", events: ["run.finished" as const] };

describe("webhook secrets at rest", () => {
  it("stores the signing secret sealed (AES-256-GCM), hands it back in clear once and on read", async () => {
    const keys = parseSecretKeys(newKey());
    const hook = await createWebhook(h.db, input, keys);
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9_-]{32}$/);
    const raw = await stored(hook.id);
    expect(isSealed(raw)).toBe(true);
    expect(raw).not.toContain(hook.secret);
    expect(raw).not.toContain(hook.secret.slice(6));
    expect((await getActiveWebhook(h.db, hook.id, keys))?.secret).toBe(hook.secret);
    // Sealed twice, the same secret never reads the same (fresh IV).
    const other = await createWebhook(h.db, input, keys);
    expect((await stored(other.id)).split(":")[2]).not.toBe(raw.split(":")[2]);
  });

  it("rotation: a secret sealed under an old key opens with VOLLEY_SECRETS_KEY_OLD and is re-sealed under the new key on read", async () => {
    const [oldKey, newer] = [newKey(), newKey()];
    const hook = await createWebhook(h.db, input, parseSecretKeys(oldKey));
    const before = await stored(hook.id);
    // Without the old key the row cannot be opened, and the error says what to set.
    expect(() => openSecret(before, parseSecretKeys(newer))).toThrow(SecretKeyError);
    expect(() => openSecret(before, parseSecretKeys(newer))).toThrow(/VOLLEY_SECRETS_KEY_OLD/);
    const rotating = parseSecretKeys(newer, ` ${oldKey} , `);
    expect((await getActiveWebhook(h.db, hook.id, rotating))?.secret).toBe(hook.secret);
    const after = await stored(hook.id);
    expect(after).not.toBe(before);
    // The old key can now be dropped.
    expect((await getActiveWebhook(h.db, hook.id, parseSecretKeys(newer)))?.secret).toBe(hook.secret);
  });

  it("a row from before encryption (plain text) is sealed on first read", async () => {
    const keys = parseSecretKeys(newKey());
    const legacy = await createWebhook(h.db, input, null);
    expect(await stored(legacy.id)).toBe(legacy.secret);
    expect((await getActiveWebhook(h.db, legacy.id, keys))?.secret).toBe(legacy.secret);
    expect(isSealed(await stored(legacy.id))).toBe(true);
    expect((await getActiveWebhook(h.db, legacy.id, keys))?.secret).toBe(legacy.secret);
  });

  it("a tampered secret fails authentication instead of signing with garbage", async () => {
    const keys = parseSecretKeys(newKey());
    const hook = await createWebhook(h.db, input, keys);
    const parts = (await stored(hook.id)).split(":");
    const ct = Buffer.from(parts[4]!, "base64url");
    ct[0] = ct[0]! ^ 1;
    parts[4] = ct.toString("base64url");
    await h.db
      .update(webhooks)
      .set({ secret: parts.join(":") })
      .where(eq(webhooks.id, hook.id));
    await expect(getActiveWebhook(h.db, hook.id, keys)).rejects.toThrow();
  });

  it("refuses keys that are not 32 bytes of base64, saying how to make one", () => {
    for (const bad of ["", "short", randomBytes(16).toString("base64"), "x".repeat(44)])
      expect(() => parseSecretsKey(bad), bad).toThrow(/openssl rand -base64 32/);
    expect(() => parseSecretKeys(newKey(), "nope")).toThrow(/VOLLEY_SECRETS_KEY_OLD/);
    expect(parseSecretsKey(randomBytes(32).toString("base64url"))).toHaveLength(32);
  });
});
