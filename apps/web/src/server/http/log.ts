import { pino, type Logger } from "pino";
import { logLevel } from "@/env";

// Next bundles route handlers and pages separately, so module state is per bundle; the logger and
// the "already said" set live on globalThis to be one per process.
const g = globalThis as typeof globalThis & { __volleyWebLog?: { logger?: Logger; said: Set<string> } };
const state = (g.__volleyWebLog ??= { said: new Set() });

/** The process logger, created on first use so LOG_LEVEL is read at run time, not at build time. */
export function getLogger(): Logger {
  if (!state.logger) {
    const { level, warning } = logLevel();
    state.logger = pino({ name: "web", level });
    if (warning) state.logger.warn(warning);
  }
  return state.logger;
}

/** Logs a configuration problem once per process at error level (then at debug), so polling clients don't flood the log. */
export function logOnce(key: string, message: string): void {
  const log = getLogger();
  if (state.said.has(key)) {
    log.debug(message);
    return;
  }
  state.said.add(key);
  log.error(message);
}
