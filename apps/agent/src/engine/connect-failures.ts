import { ConnectError, type ErrorClass } from "../drivers/connect-error";

/** A shard's failed connect attempts by class, and the reason a person reads when none opened. */
export class ConnectFailures {
  private readonly byClass = new Map<ErrorClass, { count: number; detail: string }>();

  /** Records a failed attempt; returns its error class. */
  record(err: unknown): ErrorClass {
    const errorClass: ErrorClass = err instanceof ConnectError ? err.errorClass : "other";
    const seen = this.byClass.get(errorClass);
    if (seen) seen.count++;
    else this.byClass.set(errorClass, { count: 1, detail: err instanceof ConnectError ? err.detail : String(err) });
    return errorClass;
  }

  /** "connect refused: ws://127.0.0.1:9/echo (ECONNREFUSED) — 50 of 50 attempts failed", naming the commonest class. */
  reason(url: string, failed: number, attempts: number, planned: number): string {
    const [errorClass, worst] = [...this.byClass.entries()].sort((a, b) => b[1].count - a[1].count)[0]!;
    const early = attempts < planned ? ` (stopped early: none of ${planned} planned connections opened)` : "";
    return `connect ${errorClass}: ${url} (${worst.detail}) — ${failed} of ${attempts} attempts failed${early}`;
  }
}
