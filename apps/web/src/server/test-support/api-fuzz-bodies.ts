/**
 * Test support for api-fuzz.test.ts (not a test itself): a seeded generator of request bodies that
 * are malformed for the route they go to. fast-check is not installed, so this is its own small
 * generator: mulberry32, so a failing case is reproduced from its seed and index alone.
 */

export type Rng = () => number;

export function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const int = (rng: Rng, n: number) => Math.floor(rng() * n);
const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[int(rng, xs.length)]!;

export interface FuzzBody {
  /** What the case is, for the failure message. */
  kind: string;
  /** The raw body: text (any JSON or not) or bytes (invalid UTF-8). */
  body: string | Uint8Array<ArrayBuffer>;
  contentType: string | null;
}

/** Which body shape a route expects, and how to break it for sure. */
export interface RouteShape {
  /** A valid body, mutated at random before the sure break. */
  valid: () => Record<string, unknown>;
  /** Top-level fields the schema requires (dropping or retyping one always fails). */
  required: readonly string[];
}

const UNICODE = [
  "é",
  "名前",
  "🚀",
  "\u0000",
  "\u202e",
  "\ud800",
  "\udfff",
  "\ufeff",
  "Z\u0351\u0360",
  "\u2028",
  "𝕍𝕠𝕝𝕝𝕖𝕪",
  "' OR 1=1 --",
  "<script>",
  "%00",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: "${x}" is hostile input, sent as text on purpose.
  "${x}",
  "__proto__",
  "constructor",
];

function randomString(rng: Rng): string {
  switch (int(rng, 5)) {
    case 0:
      return "";
    case 1:
      return pick(rng, UNICODE);
    case 2:
      return pick(rng, UNICODE).repeat(1 + int(rng, 50));
    case 3:
      return "x".repeat(int(rng, 3) === 0 ? 200_000 : 1000);
    default:
      return Array.from({ length: 1 + int(rng, 20) }, () => String.fromCharCode(int(rng, 0x10000))).join("");
  }
}

// biome-ignore lint/correctness/noPrecisionLoss: numbers past double precision are hostile input on purpose.
const HUGE = [1e308, -1e308, 2 ** 53 + 1, -(2 ** 63), 1e-320, 0.1, -0, 4294967296, 99999999999999999999];

/** Any JSON value, nested up to `depth`. */
function randomValue(rng: Rng, depth = 3): unknown {
  switch (int(rng, depth > 0 ? 9 : 6)) {
    case 0:
      return null;
    case 1:
      return rng() < 0.5;
    case 2:
      return pick(rng, HUGE);
    case 3:
      return int(rng, 2000) - 1000;
    case 4:
    case 5:
      return randomString(rng);
    case 6:
      return Array.from({ length: int(rng, 4) }, () => randomValue(rng, depth - 1));
    case 7:
      return Object.fromEntries(Array.from({ length: int(rng, 4) }, () => [randomString(rng).slice(0, 30), randomValue(rng, depth - 1)]));
    default:
      // Deeper documents come as raw text (malformedBody): JSON.stringify itself recurses.
      return deepNest(rng, 50 + int(rng, 800));
  }
}

function deepNest(rng: Rng, depth: number): unknown {
  let v: unknown = randomValue(rng, 0);
  for (let i = 0; i < depth; i++) v = rng() < 0.5 ? [v] : { a: v };
  return v;
}

/** Replaces or deletes a random node somewhere inside `obj` (may or may not make it invalid). */
function mutateSomewhere(rng: Rng, obj: Record<string, unknown>): void {
  let node: Record<string, unknown> = obj;
  for (let depth = 0; depth < 4; depth++) {
    const keys = Object.keys(node);
    if (keys.length === 0) break;
    const key = pick(rng, keys);
    const child = node[key];
    if (child && typeof child === "object" && !Array.isArray(child) && rng() < 0.6) {
      node = child as Record<string, unknown>;
      continue;
    }
    if (rng() < 0.2) delete node[key];
    else node[key] = randomValue(rng);
    return;
  }
  node[randomString(rng).slice(0, 20) || "extra"] = randomValue(rng);
}

/** Every string leaf of a (small) body, as the object holding it and its key. */
function stringLeaves(root: unknown): Array<[Record<string, unknown>, string]> {
  const out: Array<[Record<string, unknown>, string]> = [];
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== "object") continue;
    for (const [k, child] of Object.entries(v)) {
      if (typeof child === "string") out.push([v as Record<string, unknown>, k]);
      else stack.push(child);
    }
  }
  return out;
}

/**
 * One change that no valid body survives: a required field gone or of a wrong type, an unknown
 * top-level key (the schemas are strict), or text PostgreSQL cannot store (NUL, an unpaired
 * surrogate) planted in a string the schema would otherwise accept.
 */
function breakForSure(rng: Rng, obj: Record<string, unknown>, shape: RouteShape): string {
  const field = pick(rng, shape.required);
  const leaves = stringLeaves(obj);
  switch (int(rng, leaves.length > 0 ? 4 : 3)) {
    case 3: {
      const [holder, key] = pick(rng, leaves);
      const text = holder[key] as string;
      const at = int(rng, text.length + 1);
      const bad = pick(rng, ["\u0000", "\ud800", "\udfff", "\udbff\u0000"]);
      holder[key] = text.slice(0, at) + bad + text.slice(at);
      return `${JSON.stringify(bad)} planted in ${key}`;
    }
    case 0:
      delete obj[field];
      return `without ${field}`;
    case 1: {
      // Values no required field accepts: each is an object or a non-empty string.
      obj[field] = pick(rng, [null, 42, true, [], [1, 2], 1e308, "", deepNest(rng, 200)]);
      return `${field} of a wrong type`;
    }
    default: {
      const key = `unknown_${pick(rng, UNICODE)}_${int(rng, 1000)}`;
      obj[key] = randomValue(rng);
      return `unknown key ${JSON.stringify(key)}`;
    }
  }
}

const INVALID_JSON = [
  "",
  "   \n\t ",
  "{",
  "}",
  '{"name": }',
  "{'name': 'x'}",
  '{"name": "x",}',
  "[1, 2,]",
  "NaN",
  "undefined",
  "Infinity",
  '{"a": 01}',
  '{"a": "\\x41"}',
  "\ufeff{}",
  '{"plan": {"name": "x"}',
  "null null",
  '{"a":1}{"b":2}',
  "<xml/>",
  "name=x&scopes=read",
  '--boundary\r\nContent-Disposition: form-data; name="name"\r\n\r\nx\r\n--boundary--',
];

const CONTENT_TYPES = [
  "application/json",
  "application/json; charset=utf-8",
  null,
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=boundary",
  "application/xml",
  "application/json; charset=latin1",
  "*/*",
];

/** The `index`-th malformed body for a route: the same seed and index always give the same body. */
export function malformedBody(seed: number, index: number, shape: RouteShape): FuzzBody {
  const rng = mulberry32(seed * 1_000_003 + index);
  const contentType = rng() < 0.7 ? "application/json" : pick(rng, CONTENT_TYPES);
  switch (int(rng, 10)) {
    case 0:
      return { kind: "invalid JSON text", body: pick(rng, INVALID_JSON), contentType };
    case 1: {
      // Cut a valid document anywhere: truncated uploads.
      const text = JSON.stringify(shape.valid());
      return { kind: "truncated JSON", body: text.slice(0, int(rng, text.length)), contentType };
    }
    case 2:
      return { kind: "invalid UTF-8 bytes", body: new Uint8Array(Array.from({ length: 1 + int(rng, 64) }, () => 0x80 + int(rng, 0x80))), contentType };
    case 3: {
      // Valid JSON that is not an object.
      const v = pick(rng, [null, 0, -1, 1e308, true, "plan", [], [shape.valid()], randomString(rng)]);
      return { kind: `non-object JSON ${JSON.stringify(v)?.slice(0, 40)}`, body: JSON.stringify(v), contentType };
    }
    case 4: {
      const depth = 1000 + int(rng, 200_000);
      const open = rng() < 0.5 ? "[" : '{"a":';
      const close = open === "[" ? "]" : "}";
      return { kind: `nesting ${depth} deep`, body: `${open.repeat(depth)}1${close.repeat(depth)}`, contentType };
    }
    case 5:
      return { kind: "huge number literal", body: pick(rng, ["1e400", "-1e400", "1".repeat(5000), `{"${shape.required[0]}": 1e999999}`]), contentType };
    default: {
      const obj = shape.valid();
      const mutations = int(rng, 4);
      for (let i = 0; i < mutations; i++) mutateSomewhere(rng, obj);
      const sure = breakForSure(rng, obj, shape);
      return { kind: `valid body, ${mutations} random mutation(s), ${sure}`, body: JSON.stringify(obj), contentType };
    }
  }
}
