import { randomBytes } from "node:crypto";

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

/** Prefixed, URL-safe, sortable-enough random ids: run_x7…, shd_…, agt_…. */
export function newId(prefix: "run" | "shd" | "agt" | "pln" | "org"): string {
  const bytes = randomBytes(16);
  let out = "";
  for (const b of bytes) out += ALPHABET[b & 31];
  return `${prefix}_${out}`;
}
