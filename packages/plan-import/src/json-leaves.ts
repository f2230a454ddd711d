/** Walking recorded JSON: its leaves, their paths as flow JSON paths, rewriting them. */

export type Path = (string | number)[];

export interface Leaf {
  path: Path;
  value: string | number | boolean | null;
}

export function leaves(value: unknown, path: Path = []): Leaf[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => leaves(v, [...path, i]));
  if (value !== null && typeof value === "object") return Object.entries(value).flatMap(([k, v]) => leaves(v, [...path, k]));
  if (value === undefined) return [];
  return [{ path, value: value as Leaf["value"] }];
}

/** `$.a.b[0]['odd key']`, as flow-validation's JSON paths read it. */
export function jsonPath(path: Path): string {
  return `$${path.map((k) => (typeof k === "number" ? `[${k}]` : /^[A-Za-z_$][\w$-]*$/.test(k) ? `.${k}` : `['${k.replace(/['\\]/g, "\\$&")}']`)).join("")}`;
}

export function getAt(value: unknown, path: Path): unknown {
  let v = value;
  for (const k of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string | number, unknown>)[k];
  }
  return v;
}

/** A copy of `value` with the leaf at `path` replaced (the path exists). */
export function setAt(value: unknown, path: Path, leaf: unknown): unknown {
  if (path.length === 0) return leaf;
  const [k, ...rest] = path;
  if (Array.isArray(value)) return value.map((v, i) => (i === k ? setAt(v, rest, leaf) : v));
  const obj = value as Record<string, unknown>;
  return { ...obj, [k!]: setAt(obj[k as string], rest, leaf) };
}

/** A deep copy with every string passed through `f` (object keys untouched). */
export function mapStrings<T>(value: T, f: (s: string) => string): T {
  if (typeof value === "string") return f(value) as T;
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, f)) as T;
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, f)])) as T;
  return value;
}

/** A name usable for a step or capture, from a recorded key or event. */
export function safeName(raw: string, fallback: string): string {
  const s = raw
    .replace(/[^A-Za-z0-9_-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 60);
  return s === "" ? fallback : /^[A-Za-z_]/.test(s) ? s : `_${s}`.slice(0, 60);
}
