/**
 * The JSON paths of a flow (captures and reply matching): `$` itself, `.field`, `['any key']` and
 * `[index]`, like `$.data.items[0].id` or `$[1]['user-id']`. Wildcards, filters and recursive
 * descent are refused at validation: a reply matches one value, and the agent reads it on every
 * message, so a path is compiled once into a list of steps.
 */
const STEP = /^(?:\.([A-Za-z_$][\w$-]*)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]|\["((?:[^"\\]|\\.)*)"\])/;

export type JsonPath = (value: unknown) => unknown;

/** The steps of a path, or a message saying what is wrong and how to write it. */
export function parseJsonPath(path: string): { ok: true; steps: (string | number)[] } | { ok: false; message: string } {
  if (!path.startsWith("$")) return { ok: false, message: `"${path}" is not a JSON path: start it with $, like $.id or $.data[0].id` };
  const steps: (string | number)[] = [];
  let rest = path.slice(1);
  while (rest.length > 0) {
    const m = STEP.exec(rest);
    if (!m) {
      return {
        ok: false,
        message: `cannot read "${rest}" in the JSON path ${path}: use .field, ['key'] or [index] steps (no wildcards, filters or ..), like $.data.items[0].id`,
      };
    }
    if (m[1] !== undefined) steps.push(m[1]);
    else if (m[2] !== undefined) steps.push(Number(m[2]));
    else steps.push((m[3] ?? m[4]!).replace(/\\(.)/g, "$1"));
    rest = rest.slice(m[0].length);
  }
  return { ok: true, steps };
}

/** Compiles a path validated by parseJsonPath; reading a missing step gives undefined. */
export function compileJsonPath(path: string): JsonPath {
  const parsed = parseJsonPath(path);
  if (!parsed.ok) throw new Error(parsed.message);
  const { steps } = parsed;
  if (steps.length === 0) return (v) => v;
  if (steps.length === 1) {
    const [only] = steps;
    return (v) => (v !== null && typeof v === "object" ? (v as Record<string | number, unknown>)[only!] : undefined);
  }
  return (value) => {
    let v = value;
    for (const step of steps) {
      if (v === null || typeof v !== "object") return undefined;
      v = (v as Record<string | number, unknown>)[step];
    }
    return v;
  };
}
