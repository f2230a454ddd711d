import { databaseFailure } from "@volley/db";

/** Small promise helpers: every wait in the hub is bounded, and these make the bound explicit. */

export class TimeoutError extends Error {
  override name = "TimeoutError";
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** Resolves with the promise's value, or rejects with TimeoutError(message) after `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Like withTimeout but resolves `false` instead of throwing, for best-effort waits (shutdown). */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  try {
    await withTimeout(
      promise.then(
        () => undefined,
        () => undefined,
      ),
      ms,
      "",
    );
    return true;
  } catch {
    return false;
  }
}

export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(err: Error): void;
  settled: boolean;
}

export function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: Error) => void;
  const d: Deferred<T> = {
    promise: new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    }),
    resolve: (v) => {
      if (d.settled) return;
      d.settled = true;
      resolve(v);
    },
    reject: (e) => {
      if (d.settled) return;
      d.settled = true;
      reject(e);
    },
    settled: false,
  };
  // A rejection nobody awaited yet must not crash the process; awaiting callers still see it.
  d.promise.catch(() => {});
  return d;
}

export const errorMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** "1.5 s", "30 s": how people read timeouts in error messages. */
export const seconds = (ms: number): string => `${Math.round(ms / 100) / 10} s`;

/**
 * Runs `op`; while it fails because PostgreSQL cannot be reached (not for any other error), waits and
 * tries again, for up to `maxMs`, telling `onWait` once per outage. For writes that must land, such
 * as a shard's outcome: giving up on the first refused connection made the watchers take the
 * unrecorded shard for one whose hub had died.
 */
export async function whileDatabaseDown<T>(op: () => Promise<T>, opts: { maxMs: number; onWait?: (err: unknown) => void }): Promise<T> {
  const giveUpAt = Date.now() + opts.maxMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return await op();
    } catch (err) {
      if (databaseFailure(err) !== "lost" || Date.now() >= giveUpAt) throw err;
      if (attempt === 0) opts.onWait?.(err);
      await sleep(Math.min(2000, 100 * 2 ** attempt));
    }
  }
}
