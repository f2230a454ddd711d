import { MisconfiguredError } from "../env";
import { classifyError } from "./errors";
import { getLogger, logOnce } from "./log";

/** Server pages show infrastructure problems in words instead of a generic error page. */
export function describeLoadError(err: unknown, what: string): { title: string; message: string; status: number } {
  const known = classifyError(err);
  if (known instanceof MisconfiguredError) {
    logOnce(`misconfigured:${known.message}`, known.message);
    return { title: `Cannot load ${what}: web is not configured`, message: known.message, status: 500 };
  }
  if (known) return { title: `Cannot load ${what}`, message: known.message, status: known.status };
  getLogger().error({ err }, `unhandled error loading ${what}`);
  return { title: `Cannot load ${what}`, message: "Something went wrong on our side; the error has been logged. Reload to try again.", status: 500 };
}
