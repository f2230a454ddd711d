import { randomUUID } from "node:crypto";
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import path from "node:path";

export interface AgentIdentity {
  /** The persisted id the hub keys this agent's row on (agentHello.agentKey). */
  agentKey: string;
  /** The file it is kept in: deleting it makes the agent enroll as a new one. */
  file: string;
  /** Frees the slot for the next process (also done at exit). */
  release(): void;
}

/** More agents than this on one state dir at once run without a persisted id (a warning says so). */
const MAX_SLOTS = 64;

/**
 * The agent's persisted identity in `dir`, so a restarted agent keeps one row on the hub. Several
 * agents may share a state dir (one host, one user): each running process holds a slot
 * (`agent-id`, `agent-id-2`, …) by a lock file naming its pid and boot, and a restarted agent takes
 * the first free one, so N agents keep N identities and no two running agents share one.
 * A lock whose process is gone (killed, or from before a reboot) is free.
 */
export function loadAgentIdentity(dir: string): AgentIdentity {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (let slot = 1; slot <= MAX_SLOTS; slot++) {
    const file = path.join(dir, slot === 1 ? "agent-id" : `agent-id-${slot}`);
    const lock = `${file}.lock`;
    if (!takeLock(lock)) continue;
    const release = () => {
      try {
        if (readLock(lock)?.pid === process.pid) unlinkSync(lock);
      } catch {
        // already gone
      }
    };
    process.once("exit", release);
    return { agentKey: readOrCreateId(file), file, release };
  }
  throw new Error(`every identity slot in ${dir} is held by a running agent (${MAX_SLOTS}); set AGENT_STATE_DIR to a directory of this agent's own`);
}

function readOrCreateId(file: string): string {
  try {
    const saved = JSON.parse(readFileSync(file, "utf8")) as { id?: unknown };
    if (typeof saved.id === "string" && saved.id.length >= 8) return saved.id;
  } catch {
    // missing or unreadable: a new identity
  }
  const id = `agent-${randomUUID()}`;
  // Written whole or not at all: a crash mid-write must not leave a half id.
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify({ id, createdAt: new Date().toISOString() })}\n`, { mode: 0o600 });
  renameSync(tmp, file);
  return id;
}

interface LockOwner {
  pid: number;
  boot: string;
}

function bootId(): string {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  } catch {
    return "";
  }
}

function readLock(lock: string): LockOwner | null {
  try {
    return JSON.parse(readFileSync(lock, "utf8")) as LockOwner;
  } catch {
    return null;
  }
}

const running = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
};

function mtimeMs(file: string): number {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

function takeLock(lock: string): boolean {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lock, "wx", 0o600);
      writeSync(fd, JSON.stringify({ pid: process.pid, boot: bootId() } satisfies LockOwner));
      closeSync(fd);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const owner = readLock(lock);
    if (owner?.pid === process.pid) return true;
    // Unreadable: another process between its create and its write (held), or one that died there (stale after a few seconds).
    const stale = owner ? owner.boot !== bootId() || !running(owner.pid) : Date.now() - mtimeMs(lock) > 5000;
    if (!stale) return false;
    try {
      unlinkSync(lock);
    } catch {
      // another process took it over first; the next create decides
    }
  }
  return false;
}
