import { isAddressRange, isIpAddress } from "@volley/contracts";
import { DEFAULT_QUOTAS, type Quotas } from "./target-policy";

/**
 * The one parser of the admission variables, VOLLEY_TARGET_ALLOWLIST and VOLLEY_QUOTA_*: web and the
 * hub admit runs by the same rules (web a run it queues, the hub a schedule's firing), so they must
 * read the same values the same way. Each deployable's env.ts (the only reader of process.env there)
 * hands the raw values in; unset or empty means the default.
 */

type QuotaVariable = "VOLLEY_QUOTA_CONNECTIONS" | "VOLLEY_QUOTA_RATE" | "VOLLEY_QUOTA_DURATION";
type AdmissionVariable = "VOLLEY_TARGET_ALLOWLIST" | QuotaVariable;

const QUOTAS: Record<QuotaVariable, { key: keyof Quotas; what: string; example: number }> = {
  VOLLEY_QUOTA_CONNECTIONS: { key: "connections", what: "connections an organization's runs may open at once", example: 10_000 },
  VOLLEY_QUOTA_RATE: { key: "messagesPerSecond", what: "messages per second an organization's runs may send in total", example: 50_000 },
  VOLLEY_QUOTA_DURATION: { key: "durationSeconds", what: "seconds one run may send for", example: 1800 },
};

const SAME_VALUE = "give web and the hub the same value";

/** A bad admission variable: `problem` says what is wrong and the fix (the hub's env loader prints name and value itself); `message` adds both. */
export class AdmissionEnvError extends Error {
  constructor(
    readonly variable: string,
    readonly value: string,
    readonly problem: string,
  ) {
    super(`${variable}=${JSON.stringify(value)}: ${problem}`);
    this.name = "AdmissionEnvError";
  }
}

const unset = (value: string | undefined): value is undefined => value === undefined || value.trim() === "";

/** One hosted quota: a whole number ≥ 1; unset, the built-in default (DEFAULT_QUOTAS). */
export function parseQuota(variable: QuotaVariable, value: string | undefined): number {
  const { key, what, example } = QUOTAS[variable];
  if (unset(value)) return DEFAULT_QUOTAS[key];
  const n = Number(value.trim());
  if (Number.isSafeInteger(n) && n >= 1) return n;
  throw new AdmissionEnvError(
    variable,
    value,
    `not a whole number ≥ 1 — set it to the most ${what} (e.g. ${variable}=${example}), or unset it for the default ${DEFAULT_QUOTAS[key]}; ${SAME_VALUE}`,
  );
}

// A DNS name: dot-separated labels of letters, digits, hyphens (not first or last) and underscores.
const LABEL = "[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?";
const HOST_NAME = new RegExp(`^(?=.{1,253}$)${LABEL}(?:\\.${LABEL})*$`);

function validEntry(entry: string): boolean {
  if (entry === "*") return true;
  if (entry.startsWith("*.")) return HOST_NAME.test(entry.slice(2));
  if (entry.includes("/")) return isAddressRange(entry);
  return isIpAddress(entry) || HOST_NAME.test(entry);
}

/**
 * Self-hosted mode's allowlist, lower case: a comma list of host names (`api.example.com`), suffixes
 * (`*.example.com`), addresses or CIDR ranges (`10.0.0.0/8`), or `*` for any host. Unset: none (loopback only).
 */
export function parseTargetAllowlist(value: string | undefined): string[] {
  if (unset(value)) return [];
  const entries = value
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  const bad = entries.find((e) => !validEntry(e));
  if (bad !== undefined) {
    throw new AdmissionEnvError(
      "VOLLEY_TARGET_ALLOWLIST",
      value,
      `the entry ${JSON.stringify(bad)} is not a host name, *.suffix, address or CIDR range — list them comma separated without scheme or port, e.g. VOLLEY_TARGET_ALLOWLIST=api.example.com,*.staging.example.com,10.0.0.0/8 (* allows any host); ${SAME_VALUE}`,
    );
  }
  return entries;
}

/** The allowlist and the default hosted quotas from an environment; throws AdmissionEnvError naming the first bad variable. */
export function parseAdmissionEnv(env: Readonly<Partial<Record<AdmissionVariable, string>>>): { allowlist: string[]; quotas: Quotas } {
  return {
    allowlist: parseTargetAllowlist(env.VOLLEY_TARGET_ALLOWLIST),
    quotas: {
      connections: parseQuota("VOLLEY_QUOTA_CONNECTIONS", env.VOLLEY_QUOTA_CONNECTIONS),
      messagesPerSecond: parseQuota("VOLLEY_QUOTA_RATE", env.VOLLEY_QUOTA_RATE),
      durationSeconds: parseQuota("VOLLEY_QUOTA_DURATION", env.VOLLEY_QUOTA_DURATION),
    },
  };
}
