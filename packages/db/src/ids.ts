import { randomBytes } from "node:crypto";

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

/** Prefixed, URL-safe, sortable-enough random ids: run_x7…, shd_…, agt_…. */
export type IdPrefix = "run" | "shd" | "agt" | "pln" | "org" | "tok" | "usr" | "ses" | "acc" | "ver" | "mem" | "inv" | "atk" | "whk" | "tgt" | "shr" | "sch";

export function newId(prefix: IdPrefix): string {
  const bytes = randomBytes(16);
  let out = "";
  for (const b of bytes) out += ALPHABET[b & 31];
  return `${prefix}_${out}`;
}
