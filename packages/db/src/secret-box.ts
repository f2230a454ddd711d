import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

/**
 * Secrets Volley must use again later (webhook signing secrets: the hub signs with them, so they
 * cannot be hashed) are stored sealed with AES-256-GCM under VOLLEY_SECRETS_KEY. Rotation: set the
 * new key as VOLLEY_SECRETS_KEY and the previous ones in VOLLEY_SECRETS_KEY_OLD (comma separated);
 * a secret sealed under an old key is opened with it and re-sealed under the current key on its
 * next read, so old keys can be dropped once every row has been read (or re-created).
 *
 * Stored form: `vsec1:<key id>:<iv>:<tag>:<ciphertext>`, all base64url; the key id is the first 8
 * bytes of the key's SHA-256, so the right key is picked without trial decryption. A value without
 * the prefix is a row from before encryption (plain text), sealed on its next read.
 */

export const SEALED_PREFIX = "vsec1:";

export interface SecretKeys {
  current: Buffer;
  old: Buffer[];
}

const keyId = (key: Buffer) => createHash("sha256").update(key).digest().subarray(0, 8).toString("base64url");

/** Parses one key: 32 bytes, base64 (or base64url). Throws a message naming `name` and how to make one. */
export function parseSecretsKey(value: string, name = "VOLLEY_SECRETS_KEY"): Buffer {
  const key = Buffer.from(value.trim(), "base64");
  if (key.length !== 32 || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(value.trim())) {
    throw new Error(`${name} must be 32 random bytes in base64 (got ${key.length} bytes); generate one with \`openssl rand -base64 32\``);
  }
  return key;
}

/** The keys from the environment's values: the current key and a comma-separated list of old ones. */
export function parseSecretKeys(current: string, old = ""): SecretKeys {
  return {
    current: parseSecretsKey(current),
    old: old
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean)
      .map((k) => parseSecretsKey(k, "VOLLEY_SECRETS_KEY_OLD")),
  };
}

export function isSealed(stored: string): boolean {
  return stored.startsWith(SEALED_PREFIX);
}

export function sealSecret(plain: string, keys: SecretKeys): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", keys.current, iv);
  const ct = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return `${SEALED_PREFIX}${[keyId(keys.current), iv, cipher.getAuthTag(), ct].map((p) => (typeof p === "string" ? p : p.toString("base64url"))).join(":")}`;
}

export class SecretKeyError extends Error {
  override name = "SecretKeyError";
}

/**
 * Opens a stored secret. `reseal` is true when the stored form should be replaced by
 * sealSecret(plain, keys): it is plain text from before encryption, or sealed under an old key.
 */
export function openSecret(stored: string, keys: SecretKeys): { plain: string; reseal: boolean } {
  if (!isSealed(stored)) return { plain: stored, reseal: true };
  const [kid, iv, tag, ct] = stored.slice(SEALED_PREFIX.length).split(":");
  const key = [keys.current, ...keys.old].find((k) => keyId(k) === kid);
  if (!key || iv === undefined || tag === undefined || ct === undefined) {
    throw new SecretKeyError(
      `a stored secret was sealed with a key this process does not have (key id ${kid}); set VOLLEY_SECRETS_KEY to that key, or list it in VOLLEY_SECRETS_KEY_OLD while rotating`,
    );
  }
  const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  const plain = Buffer.concat([decipher.update(Buffer.from(ct, "base64url")), decipher.final()]).toString("utf8");
  return { plain, reseal: key !== keys.current };
}

/** How every secret sealed under the current key begins: rows without it are plain or under an old key (to re-seal). */
export const currentSealPrefix = (keys: SecretKeys) => `${SEALED_PREFIX}${keyId(keys.current)}:`;
