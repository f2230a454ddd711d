import { z } from "zod";

/**
 * Shared by every deployable's env.ts (agent, hub, targets): the same log levels, port rule and
 * fail-fast loader, so a bad variable reads the same whichever process it stops.
 */
export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export const logLevelSchema = z.enum(LOG_LEVELS, { error: `use one of ${LOG_LEVELS.join(", ")}` }).default("info");

/** A listening port; 0 picks a free one. */
export function portSchema(fallback: number) {
  return z.coerce
    .number({ error: `set it to a port number such as ${fallback}` })
    .int(`set it to a whole port number such as ${fallback}`)
    .min(0, "set it to a port between 0 and 65535")
    .max(65535, "set it to a port between 0 and 65535")
    .default(fallback);
}

/**
 * Validates the environment once; a bad or missing value writes one line naming the variable and
 * the fix, then exits 1. Empty strings mean "unset", so `HUB_PORT= npm start` takes the default.
 * Values of `isSecret` variables (tokens, URLs that may hold passwords) are named, never printed.
 */
export function loadEnvOrExit<S extends z.ZodType>(schema: S, source: NodeJS.ProcessEnv, isSecret: (name: string) => boolean = () => false): z.output<S> {
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== ""));
  const result = schema.safeParse(cleaned);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const name = String(issue?.path[0] ?? "environment");
  const value = cleaned[name];
  const shown = value !== undefined && !isSecret(name) ? `=${JSON.stringify(value)}` : "";
  const what = value === undefined ? "missing" : "invalid";
  process.stderr.write(`${what} environment variable ${name}${shown}: ${issue?.message}\n`);
  process.exit(1);
}
