import ipaddr from "ipaddr.js";
import { AdmissionEnvError, parseAdmissionEnv, type TargetPolicy } from "@volley/admission";
import { parseSecretKeys, type SecretKeys } from "@volley/db";
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

const urlVar = (protocols: RegExp, kind: string, example: string) => z.string().regex(protocols, `must be a ${kind} URL such as ${example}`);

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

/** `hosted` (a public SaaS: strict target checks, required auth secret) or `self-hosted` (default). */
export type VolleyMode = "hosted" | "self-hosted";
export function volleyMode(): VolleyMode {
  const value = raw("VOLLEY_MODE");
  if (value === undefined || value === "self-hosted") return "self-hosted";
  if (value === "hosted") return "hosted";
  throw new MisconfiguredError("VOLLEY_MODE", `VOLLEY_MODE=${JSON.stringify(value)} is not one of hosted, self-hosted — unset it for a self-hosted install`);
}

/**
 * The secret better-auth signs session cookies with: AUTH_SECRET, at least 32 characters, required
 * in every mode. Nothing derives one any more (it was derived from DATABASE_URL, which anyone who
 * could read the database URL then knew): `npm start` generates one into .volley/auth-secret, the
 * Helm chart into a Secret it keeps across upgrades, and compose refuses to start without it.
 */
export function authSecret(): string {
  const value = raw("AUTH_SECRET");
  if (value === undefined)
    throw new MisconfiguredError(
      "AUTH_SECRET",
      "AUTH_SECRET is not set — web signs session cookies with it: generate one with `openssl rand -base64 32`, give it to web as AUTH_SECRET (the same value on every replica, kept across restarts) and restart web (`npm start` and the Helm chart generate one for you)",
    );
  if (value.length < 32)
    throw new MisconfiguredError("AUTH_SECRET", "AUTH_SECRET must be at least 32 characters — generate one with `openssl rand -base64 32`");
  return value;
}

/**
 * The keys webhook signing secrets are sealed with (AES-256-GCM, @volley/db secret-box):
 * VOLLEY_SECRETS_KEY (32 bytes, base64) and, while rotating, the previous keys in
 * VOLLEY_SECRETS_KEY_OLD (comma separated). The hub needs the same values. Required in hosted mode;
 * a self-hosted install without it (npm start generates one) stores the secrets as is, with a warning.
 */
export function secretsKeys(): SecretKeys | null {
  const value = raw("VOLLEY_SECRETS_KEY");
  if (value === undefined) {
    if (volleyMode() === "hosted")
      throw new MisconfiguredError(
        "VOLLEY_SECRETS_KEY",
        "VOLLEY_SECRETS_KEY is not set — hosted mode needs it; generate one with `openssl rand -base64 32` and give web and hub the same value",
      );
    return null;
  }
  try {
    return parseSecretKeys(value, raw("VOLLEY_SECRETS_KEY_OLD"));
  } catch (err) {
    throw new MisconfiguredError(/_OLD/.test((err as Error).message) ? "VOLLEY_SECRETS_KEY_OLD" : "VOLLEY_SECRETS_KEY", (err as Error).message);
  }
}

/** The public origin of web (e.g. https://volley.example.com) for invitation links and cookie checks; null = the request's origin. */
export function publicUrl(): string | null {
  const value = raw("VOLLEY_PUBLIC_URL");
  if (value === undefined) return null;
  const parsed = z.url({ protocol: /^https?$/ }).safeParse(value);
  if (!parsed.success)
    throw new MisconfiguredError("VOLLEY_PUBLIC_URL", `VOLLEY_PUBLIC_URL (${JSON.stringify(value)}) must be an http(s) URL such as https://volley.example.com`);
  return parsed.data.replace(/\/$/, "");
}
export const redisUrl = (): string => requireEnv("REDIS_URL");

/**
 * The hub web relays agents to (server.ts, /hub/socket.io/ → the hub's gateway): HUB_URL, default
 * http://127.0.0.1:3001 (the hub's own default, loopback). Read once at start; a bad value is fatal there.
 */
export function hubInternalUrl(): string {
  const value = raw("HUB_URL") ?? "http://127.0.0.1:3001";
  const parsed = z.url({ protocol: /^https?$/ }).safeParse(value);
  if (!parsed.success)
    throw new MisconfiguredError(
      "HUB_URL",
      `HUB_URL (${JSON.stringify(value)}) must be the http(s) URL web reaches the hub at, such as http://127.0.0.1:3001 — or unset it for that default`,
    );
  return parsed.data.replace(/\/+$/, "");
}

/**
 * The hub URL agents connect to, as the Agents page prints it in install commands (e.g.
 * https://hub.volley.example.com); null = http://<the request's host name>:3001, the hub's default port.
 */
export function hubPublicUrl(): string | null {
  const value = raw("VOLLEY_HUB_PUBLIC_URL");
  if (value === undefined) return null;
  const parsed = z.url({ protocol: /^https?$/ }).safeParse(value);
  if (!parsed.success) {
    throw new MisconfiguredError(
      "VOLLEY_HUB_PUBLIC_URL",
      `VOLLEY_HUB_PUBLIC_URL (${JSON.stringify(value)}) must be the http(s) URL agents reach the hub at, such as https://hub.volley.example.com — or unset it for http://<this host>:3001`,
    );
  }
  return parsed.data.replace(/\/+$/, "");
}

function positiveInt(name: string, fallback: number): number {
  const value = raw(name);
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new MisconfiguredError(name, `${name}=${JSON.stringify(value)} must be a whole number ≥ 1 — unset it for the default (${fallback})`);
  return n;
}

/** Requests per minute per credential (token, user, or client address when anonymous). */
export const apiRateLimit = (): number => positiveInt("VOLLEY_API_RATE_LIMIT", 1200);
/** Sign-in and sign-up attempts per 15 minutes per client address. */
export const signInRateLimit = (): number => positiveInt("VOLLEY_SIGNIN_RATE_LIMIT", 30);
/** Failed sign-ins per 15 minutes per account (email), from any number of addresses. */
export const accountSignInLimit = (): number => positiveInt("VOLLEY_ACCOUNT_SIGNIN_LIMIT", 10);

/** The largest request body the API reads (plans included), in bytes; default 1 MiB. Auth routes take far less (body-limit.ts). */
export const maxBodyBytes = (): number => positiveInt("VOLLEY_MAX_BODY_BYTES", 1_048_576);

/** Organizations one user may own (create); default 10. */
export const maxOrgsPerUser = (): number => positiveInt("VOLLEY_MAX_ORGS_PER_USER", 10);

/**
 * The reverse proxies whose X-Forwarded-For web believes: a comma list of addresses or CIDR ranges
 * (`10.0.0.0/8, 127.0.0.1`). Unset (the default): none, so the client address is always the socket
 * peer and a client cannot pick its own rate-limit bucket by sending the header.
 */
export function trustedProxies(): string[] {
  const value = raw("VOLLEY_TRUSTED_PROXIES");
  if (value === undefined) return [];
  const entries = value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const entry of entries) {
    const ok = entry.includes("/") ? ipaddr.isValidCIDR(entry) : ipaddr.isValid(entry);
    if (!ok) {
      throw new MisconfiguredError(
        "VOLLEY_TRUSTED_PROXIES",
        `VOLLEY_TRUSTED_PROXIES entry ${JSON.stringify(entry)} is not an IP address or CIDR range — list your reverse proxies' addresses, e.g. VOLLEY_TRUSTED_PROXIES=10.0.0.0/8,127.0.0.1, or unset it when nothing sits in front of web`,
      );
    }
  }
  return entries;
}

const logLevelSchema = z.enum(LOG_LEVELS);

/** LOG_LEVEL, default info. An unknown value falls back to info (and says so) rather than failing requests. */
export function logLevel(): { level: LogLevel; warning?: string } {
  const value = raw("LOG_LEVEL");
  if (value === undefined) return { level: "info" };
  const parsed = logLevelSchema.safeParse(value.toLowerCase());
  if (parsed.success) return { level: parsed.data };
  return { level: "info", warning: `LOG_LEVEL=${JSON.stringify(value)} is not one of ${LOG_LEVELS.join(", ")}; using info` };
}

const portSchema = z.coerce.number().int().min(0).max(65_535);

/**
 * What the custom server (server.ts) listens on: WEB_PORT (default 3000), WEB_HOST (default
 * 0.0.0.0), and whether Next runs in development mode (NODE_ENV=development). Read once at start;
 * a bad port is fatal there, with the variable named.
 */
export function serverOptions(): { port: number; host: string; dev: boolean } {
  const rawPort = raw("WEB_PORT");
  const port = portSchema.safeParse(rawPort ?? "3000");
  if (!port.success)
    throw new MisconfiguredError("WEB_PORT", `WEB_PORT (${JSON.stringify(rawPort)}) must be a port number from 0 to 65535, e.g. WEB_PORT=3000`);
  return { port: port.data, host: raw("WEB_HOST") ?? "0.0.0.0", dev: raw("NODE_ENV") === "development" };
}

/** Redis URL for the live feed's Socket.IO adapter, or null when REDIS_URL is unset (the feed then stays off and pages poll). */
export function optionalRedisUrl(): string | null {
  return raw("REDIS_URL") === undefined ? null : requireEnv("REDIS_URL");
}

/**
 * The install's target policy, as @volley/admission takes it: VOLLEY_MODE, and VOLLEY_TARGET_ALLOWLIST
 * (self-hosted: the hosts plans may name besides loopback) and VOLLEY_QUOTA_* (hosted: an org's quotas
 * unless it has its own), parsed by @volley/admission's parser, the hub's too.
 */
export function targetPolicy(): TargetPolicy {
  const mode = volleyMode();
  try {
    return {
      mode,
      ...parseAdmissionEnv({
        VOLLEY_TARGET_ALLOWLIST: raw("VOLLEY_TARGET_ALLOWLIST"),
        VOLLEY_QUOTA_CONNECTIONS: raw("VOLLEY_QUOTA_CONNECTIONS"),
        VOLLEY_QUOTA_RATE: raw("VOLLEY_QUOTA_RATE"),
        VOLLEY_QUOTA_DURATION: raw("VOLLEY_QUOTA_DURATION"),
      }),
    };
  } catch (err) {
    if (err instanceof AdmissionEnvError) throw new MisconfiguredError(err.variable, err.message);
    throw err;
  }
}
