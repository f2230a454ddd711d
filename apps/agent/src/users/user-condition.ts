import { compileValue, type TemplateContext, type UserCondition } from "@volley/contracts";

/** A number, or a string that reads as one ("3" from a CSV column); anything else is NaN. */
function asNumber(v: unknown): number {
  if (typeof v === "number") return v;
  if (typeof v === "string" && v.trim() !== "") return Number(v);
  return Number.NaN;
}

const isSet = (v: unknown) => v !== undefined && v !== null && v !== "";

/**
 * An `if` or a loop's `while`, compiled once: the variable read from the user's context and its one
 * comparison (validation allows no more). Values compare as text for equals, notEquals and in (a
 * captured 2 equals "2"); the numeric comparisons are false for a value that is not a number, and
 * matches is false for one that is not set.
 */
export function compileCondition(c: UserCondition): (ctx: TemplateContext) => boolean {
  const read = compileValue(`{{ ${c.var} }}`);
  const test = comparison(c);
  return (ctx) => test(read(ctx));
}

function comparison(c: UserCondition): (v: unknown) => boolean {
  if (c.equals !== undefined) {
    const want = String(c.equals);
    return (v) => String(v) === want;
  }
  if (c.notEquals !== undefined) {
    const other = String(c.notEquals);
    return (v) => String(v) !== other;
  }
  const number = (holds: (n: number) => boolean) => (v: unknown) => {
    const n = asNumber(v);
    return Number.isFinite(n) && holds(n);
  };
  const { above, below, atLeast, atMost } = c;
  if (above !== undefined) return number((n) => n > above);
  if (below !== undefined) return number((n) => n < below);
  if (atLeast !== undefined) return number((n) => n >= atLeast);
  if (atMost !== undefined) return number((n) => n <= atMost);
  if (c.matches !== undefined) {
    const re = new RegExp(c.matches);
    return (v) => isSet(v) && re.test(String(v));
  }
  if (c.in !== undefined) {
    const set = new Set(c.in.map(String));
    return (v) => isSet(v) && set.has(String(v));
  }
  return isSet;
}
