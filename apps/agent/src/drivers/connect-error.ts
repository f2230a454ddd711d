/** Error classes, counted as `errors.<class>`; a flow's failed setup step is `setup.<step name>`. */
export type ErrorClass = "refused" | "timeout" | "handshake" | "protocol" | "closed" | "other" | `setup.${string}`;

/** Why a connection attempt failed, classified so failures are counted per class, never lumped. */
export class ConnectError extends Error {
  constructor(
    readonly errorClass: ErrorClass,
    /** Short, human detail: "ECONNREFUSED", "HTTP 404", "no answer in 10000 ms". */
    readonly detail: string,
  ) {
    super(`connect ${errorClass}: ${detail}`);
    this.name = "ConnectError";
  }
}
