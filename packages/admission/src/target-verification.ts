import { resolveTxt } from "node:dns/promises";

/** Where the owner of `host` puts `token` to prove it (hosted mode). */
export function proofInstructions(host: string, token: string): { http: string; dns: string } {
  return {
    http: `serve the text ${token} at https://${host}/.well-known/volley-verify/${token} (or http://)`,
    dns: `publish a TXT record volley-verify=${token} on ${host}`,
  };
}

export interface ProofOptions {
  /** Ports to fetch the well-known URL on (tests run the owner's server on a free port). */
  ports?: { https: number; http: number };
  timeoutMs?: number;
  txt?: (host: string) => Promise<string[][]>;
}

async function fetchProof(url: string, token: string, timeoutMs: number): Promise<boolean> {
  try {
    const res = await fetch(url, { redirect: "manual", signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) return false;
    return (await res.text()).trim() === token;
  } catch {
    return false;
  }
}

/**
 * Checks the proof now: the well-known URL over https, then http (no redirects followed), then the
 * host's TXT records. Returns how it was found, or null. Callers in hosted mode must have checked
 * that the host resolves to public addresses first (target-policy.ts), so this never probes a
 * private network.
 */
export async function checkProof(host: string, token: string, opts: ProofOptions = {}): Promise<"http" | "dns" | null> {
  const ports = opts.ports ?? { https: 443, http: 80 };
  const timeoutMs = opts.timeoutMs ?? 5000;
  const path = `/.well-known/volley-verify/${token}`;
  const at = (scheme: string, port: number, standard: number) => `${scheme}://${host}${port === standard ? "" : `:${port}`}${path}`;
  if (await fetchProof(at("https", ports.https, 443), token, timeoutMs)) return "http";
  if (await fetchProof(at("http", ports.http, 80), token, timeoutMs)) return "http";
  try {
    const records = await (opts.txt ?? resolveTxt)(host);
    if (records.some((parts) => parts.join("") === `volley-verify=${token}`)) return "dns";
  } catch {
    /* no TXT records: not verified */
  }
  return null;
}
