import { lookup } from "node:dns/promises";
import {
  addressMatches,
  flowAbsoluteUrls,
  isIpAddress,
  isLoopbackAddress,
  isPublicAddress,
  literalHost,
  nonPublicReason,
  peakSendRate,
  planTiming,
  type Plan,
} from "@volley/contracts";
import { AdmissionRefusal } from "./admission-refusal";

/**
 * Which targets a plan may load (web before it queues a run, the hub before a schedule's firing
 * starts one; each passes the policy its own env.ts read). Hosted mode (a public SaaS): the host must resolve only to public
 * unicast addresses (checked after DNS resolution, so a name pointing at 10.0.0.1 or 127.0.0.1 is
 * refused), its owner must have verified it for the org (checked by the caller, target-verification.ts),
 * and the plan must fit the quotas. Self-hosted (the default): loopback plus the admin's
 * VOLLEY_TARGET_ALLOWLIST.
 */

export interface Quotas {
  connections: number;
  messagesPerSecond: number;
  durationSeconds: number;
}

/** What VOLLEY_QUOTA_CONNECTIONS, _RATE and _DURATION default to. */
export const DEFAULT_QUOTAS: Quotas = { connections: 10_000, messagesPerSecond: 50_000, durationSeconds: 1800 };

/** The install's policy: VOLLEY_MODE, VOLLEY_TARGET_ALLOWLIST (self-hosted) and the default quotas (hosted; an org's own override them). */
export interface TargetPolicy {
  mode: "hosted" | "self-hosted";
  allowlist: string[];
  quotas: Quotas;
}

export type Resolver = (host: string) => Promise<string[]>;

export const systemResolver: Resolver = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** The host name of a target URL, lower case, IPv6 brackets removed. */
export function targetHost(url: string): string {
  return new URL(url).hostname.toLowerCase().replace(/^\[|\]$/g, "");
}

const refused = (message: string, field = "plan.target.url") => new AdmissionRefusal("target_refused", message, [{ path: field, message }]);

/** The addresses a host resolves to; an unresolvable host is a 400 naming the field. */
export async function resolveTarget(host: string, resolve: Resolver = systemResolver, field = "plan.target.url"): Promise<string[]> {
  if (isIpAddress(host)) return [host];
  try {
    const addresses = await resolve(host);
    if (addresses.length > 0) return addresses;
  } catch {
    /* answered below */
  }
  const message = `the host ${host} does not resolve; check the URL's host name`;
  throw new AdmissionRefusal("invalid_body", message, [{ path: field, message }]);
}

/** Hosted mode: only public unicast addresses (no private, loopback, link-local, multicast, reserved …). */
export function assertPublicAddresses(host: string, addresses: string[], field = "plan.target.url"): void {
  for (const address of addresses) {
    if (!isPublicAddress(address)) throw refused(nonPublicReason(host, address), field);
  }
}

function allowedBy(entry: string, host: string, addresses: string[]): boolean {
  if (entry === "*") return true;
  if (entry.startsWith("*.")) return host.endsWith(entry.slice(1)) || host === entry.slice(2);
  if (entry.includes("/") || isIpAddress(entry)) return addresses.some((a) => addressMatches(entry, a));
  return host === entry;
}

/** Self-hosted mode: loopback, or a host the admin allowed. */
export function assertAllowlisted(host: string, addresses: string[], allowlist: string[], field = "plan.target.url"): void {
  if (addresses.every(isLoopbackAddress)) return;
  if (allowlist.some((entry) => allowedBy(entry, host, addresses))) return;
  throw refused(
    `the target host ${host} (${addresses.join(", ")}) is not on this install's allowlist; an admin can add it to VOLLEY_TARGET_ALLOWLIST (host names, *.suffix, addresses or CIDR ranges; * allows any host) and restart web`,
    field,
  );
}

/** The most messages per second a plan asks for, all connections together, and how long it runs (its planned sending, contracts planTiming). */
export function planLoad(plan: Plan): { connections: number; messagesPerSecond: number; durationSeconds: number } {
  return { connections: plan.connections.count, messagesPerSecond: peakSendRate(plan), durationSeconds: Math.ceil(planTiming(plan).sendEndMs / 1000) };
}

/**
 * Hosted mode's quotas: connections and messages/s count this plan plus the runs already queued or
 * running (`inFlight`) in this org and every other org its owner owns (`orgCount` in all), so
 * splitting a big test into many runs, or over many organizations, does not get round them; a
 * run's length counts alone.
 */
export function assertWithinQuotas(plan: Plan, quotas: Quotas, inFlight: readonly Plan[] = [], orgCount = 1): void {
  const load = planLoad(plan);
  const live = inFlight.map(planLoad);
  const connections = load.connections + live.reduce((n, l) => n + l.connections, 0);
  const rate = load.messagesPerSecond + live.reduce((n, l) => n + l.messagesPerSecond, 0);
  const where = orgCount > 1 ? ` in the ${orgCount} organizations of this organization's owner` : "";
  const others = live.length > 0 ? ` with the ${live.length} run${live.length === 1 ? "" : "s"} already queued or running${where}` : "";
  const over: string[] = [];
  if (connections > quotas.connections) over.push(`${connections} connections${others} > ${quotas.connections}`);
  if (rate > quotas.messagesPerSecond) over.push(`${Math.round(rate)} messages/s in total${others} > ${quotas.messagesPerSecond}`);
  if (load.durationSeconds > quotas.durationSeconds) over.push(`a run of ${load.durationSeconds} s > ${quotas.durationSeconds} s`);
  const whose = orgCount > 1 ? "its owner's quotas (shared by all the organizations they own)" : "this organization's quotas";
  if (over.length > 0)
    throw new AdmissionRefusal(
      "quota_exceeded",
      `the plan exceeds ${whose}: ${over.join("; ")}; make it smaller, wait for running tests to end, or ask for higher quotas`,
    );
}

/**
 * Checks a plan's target before a run is queued; returns the host and the addresses it resolved to
 * (for the audit log). Hosted mode's ownership check and quotas are the caller's (they need the database).
 */
export async function checkTarget(
  plan: Plan,
  policy: Pick<TargetPolicy, "mode" | "allowlist">,
  resolve: Resolver = systemResolver,
): Promise<{ host: string; addresses: string[]; flowHosts: string[] }> {
  const host = targetHost(plan.target.url);
  const addresses = await resolveTarget(host, resolve);
  const check = (h: string, a: string[], field?: string) =>
    policy.mode === "hosted" ? assertPublicAddresses(h, a, field) : assertAllowlisted(h, a, policy.allowlist, field);
  check(host, addresses);
  // A flow's absolute request URLs reach their own hosts: each passes the same policy as target.url.
  const flowHosts: string[] = [];
  for (const { field, url } of flowAbsoluteUrls(plan)) {
    const other = literalHost(url);
    if (other === null || other === host || flowHosts.includes(other)) continue;
    check(other, await resolveTarget(other, resolve, field), field);
    flowHosts.push(other);
  }
  return { host, addresses, flowHosts };
}
