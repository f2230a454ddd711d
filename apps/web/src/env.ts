import { z } from "zod";

/**
 * The only reader of process.env in web. Nothing is read at import or build time: each getter reads
 * the variable when a request needs it, so `next build` works with no environment at all and a
 * missing variable fails only the requests that need it, with a message saying how to fix it.
 */

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** A required variable is missing or malformed. API responses turn it into 500 `misconfigured`. */
export class MisconfiguredError extends Error {
  readonly code = "misconfigured";
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
    this.name = "MisconfiguredError";
  }
}

const urlVar = (protocols: RegExp, kind: string, example: string) =>
  z.string().regex(protocols, `must be a ${kind} URL such as ${example}`);

const VARIABLES = {
  DATABASE_URL: {
    schema: urlVar(/^postgres(ql)?:\/\//, "PostgreSQL", "postgres://postgres@127.0.0.1:5432/volley"),
    fix: "set it to the PostgreSQL URL of the Volley database, e.g. DATABASE_URL=postgres://postgres@127.0.0.1:5432/volley, and restart web (`npm start` at the repo root sets it for you)",
  },
  REDIS_URL: {
    schema: urlVar(/^rediss?:\/\//, "Redis", "redis://127.0.0.1:6379"),
    fix: "set it to the Redis URL the hub uses, e.g. REDIS_URL=redis://127.0.0.1:6379, and restart web (`npm start` at the repo root sets it for you)",
  },
} as const;

export type RequiredVariable = keyof typeof VARIABLES;

function raw(name: string): string | undefined {
  const v = process.env[name];
  return v === undefined || v.trim() === "" ? undefined : v.trim();
}

function redact(value: string): string {
  try {
    const u = new URL(value);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return value.length > 40 ? `${value.slice(0, 40)}…` : value;
  }
}

/** Returns a required variable, or throws MisconfiguredError naming it and saying how to fix it. */
export function requireEnv(name: RequiredVariable): string {
  const { schema, fix } = VARIABLES[name];
  const value = raw(name);
  if (value === undefined) throw new MisconfiguredError(name, `${name} is not set — ${fix}`);
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const why = parsed.error.issues[0]?.message ?? "invalid value";
    throw new MisconfiguredError(name, `${name} (${JSON.stringify(redact(value))}) ${why} — ${fix}`);
  }
  return parsed.data;
}

export const databaseUrl = (): string => requireEnv("DATABASE_URL");
export const redisUrl = (): string => requireEnv("REDIS_URL");

const logLevelSchema = z.enum(LOG_LEVELS);

/** LOG_LEVEL, default info. An unknown value falls back to info (and says so) rather than failing requests. */
export function logLevel(): { level: LogLevel; warning?: string } {
  const value = raw("LOG_LEVEL");
  if (value === undefined) return { level: "info" };
  const parsed = logLevelSchema.safeParse(value.toLowerCase());
  if (parsed.success) return { level: parsed.data };
  return { level: "info", warning: `LOG_LEVEL=${JSON.stringify(value)} is not one of ${LOG_LEVELS.join(", ")}; using info` };
}
