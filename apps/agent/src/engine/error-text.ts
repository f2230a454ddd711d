import { ConnectError } from "../drivers/connect-error";
import type { CloseInfo } from "../drivers/driver";

/** RFC 6455 close codes a person may not know by number (1000 and 1005 are not errors, but say so too). */
const CLOSE_CODES: Record<number, string> = {
  1000: "normal closure",
  1001: "going away",
  1002: "protocol error",
  1003: "unsupported data",
  1005: "no status",
  1006: "abnormal closure, no close frame",
  1007: "invalid payload",
  1008: "policy violation",
  1009: "message too big",
  1010: "extension required",
  1011: "internal error",
  1012: "service restart",
  1013: "try again later",
  1014: "bad gateway",
};

/** What a connection the server (or the network) ended said: `close 1011 (internal error): overloaded`, a Socket.IO reason, or a plain note. */
export function closeText(info: CloseInfo): string {
  const reason = info.reason?.trim();
  if (info.code !== undefined) {
    const name = CLOSE_CODES[info.code];
    return `close ${info.code}${name ? ` (${name})` : ""}${reason ? `: ${reason}` : ""}`;
  }
  return reason || "closed by the server";
}

/** A failed connect attempt in a few words: the driver's detail ("HTTP 404", "ECONNREFUSED", "no answer in 10000 ms"). */
export function connectErrorText(err: unknown): string {
  if (err instanceof ConnectError) return `connect: ${err.detail}`;
  return `connect: ${err instanceof Error ? err.message : String(err)}`;
}
