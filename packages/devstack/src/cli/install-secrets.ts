import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * The install's own secrets, generated once into its data directory (mode 0600) and reused by
 * every `npm start`: AUTH_SECRET (signs session cookies; before, web derived it from the embedded
 * database's fixed password, so anyone could forge sessions for any local install) and
 * VOLLEY_SECRETS_KEY (seals webhook signing secrets; web and hub need the same one), and the hub's
 * bootstrap AGENT_TOKEN, which the local agent presents. The hub's gateway is reachable from other
 * hosts through web's port (/hub), so a token every install shares would let anyone on the network
 * enrol as an agent and receive plans: each install gets its own.
 */
export interface InstallSecrets {
  authSecret: string;
  secretsKey: string;
  agentToken: string;
}

const FILES = {
  authSecret: { name: "auth-secret", valid: (v: string) => v.length >= 32 },
  secretsKey: { name: "secrets-key", valid: (v: string) => /^[A-Za-z0-9+/]+={0,2}$/.test(v) && Buffer.from(v, "base64").length === 32 },
  agentToken: { name: "agent-token", valid: (v: string) => v.length >= 32 && !v.startsWith("vat_") },
} as const;

function readOrCreate(dir: string, file: { name: string; valid: (v: string) => boolean }, log: (line: string) => void): string {
  const at = path.join(dir, file.name);
  try {
    const value = readFileSync(at, "utf8").trim();
    // Never replace a bad file silently: a new secrets key would leave every sealed secret unreadable.
    if (!file.valid(value))
      throw new Error(
        `${at} does not hold a valid secret — restore it from a backup, or delete it to generate a new one (webhooks created since must then be re-created)`,
      );
    if ((statSync(at).mode & 0o077) !== 0) chmodSync(at, 0o600);
    return value;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  mkdirSync(dir, { recursive: true });
  const value = randomBytes(32).toString("base64");
  // wx: two starts at once must not each write their own secret; the loser reads the winner's.
  try {
    writeFileSync(at, `${value}\n`, { mode: 0o600, flag: "wx" });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return readOrCreate(dir, file, log);
    throw err;
  }
  log(`generated ${at} (kept for later starts; back it up with the data directory)`);
  return value;
}

export function installSecrets(dataDir: string, log: (line: string) => void = () => {}): InstallSecrets {
  return {
    authSecret: readOrCreate(dataDir, FILES.authSecret, log),
    secretsKey: readOrCreate(dataDir, FILES.secretsKey, log),
    agentToken: readOrCreate(dataDir, FILES.agentToken, log),
  };
}
