/**
 * The `{{ name }}` templates of a plan's flow: message bodies, URLs, headers and match values.
 * Compiled once per plan (the agent renders one per message on the hot path), checked at
 * validation so an unknown variable is an error naming the field, never an empty string at run time.
 *
 * Variables:
 * - `conn.index`: the connection's index in the run (0-based, across every agent)
 * - `conn.room`: the room the scenario puts the connection in (broadcast, groups), for a setup
 *   step that joins it the way the application does
 * - `msg.id`: a message's correlation id, unique in the run (messages and users' sends); put it
 *   where the server copies it back (a field of your JSON, a header) and match the reply on it
 * - `msg.seq`: the connection's (or user's) message counter, 0, 1, 2… (messages and users' sends)
 * - `msg.number`: the same counted from 1 (1, 2, 3…), as an app numbers what a user sends
 * - `data.<column>`: the connection's row of flow.data
 * - `vars.<name>`: a value captured by an earlier step; `vars.<name>.<field>…` reads into a
 *   captured object (`vars.order.id`, `vars.items.0.sku`)
 * - `random.int` (0 to 2^31−1), `random.uuid`, `random.hex` (16 hex digits)
 * - `random.int(min, max)`: a whole number from min to max, both included (Artillery's
 *   `$randomNumber(min, max)`); `random.float(min, max)`; `random.pick(a, b, c)`: one of the
 *   listed words, evenly
 * - `time.ms`: the wall clock, epoch milliseconds, when the template is rendered
 *
 * A JSON string that is exactly one `{{ … }}` takes the variable's own type (`"{{ msg.seq }}"`
 * is the number 3); anywhere else values are written as text.
 */

const HOLE = /\{\{\s*([^{}]*?)\s*\}\}/g;
const NAME =
  /^(conn\.index|conn\.room|msg\.id|msg\.seq|msg\.number|random\.int|random\.uuid|random\.hex|time\.ms|data\.[A-Za-z_][\w-]*|vars\.[A-Za-z_][\w-]*(?:\.[\w-]+)*)$/;
/** The generator forms: random.int(1, 150), random.float(0.5, 2), random.pick(red, green, blue). */
const CALL = /^random\.(int|float|pick)\(\s*([^()]*?)\s*\)$/;

type Call = { fn: "int" | "float" | "pick"; args: string[] };

/** A generator call's arguments checked: numbers for int and float (min ≤ max), at least one word for pick. */
function parseCall(name: string): Call | { problem: string } | undefined {
  const m = CALL.exec(name);
  if (!m) return undefined;
  const fn = m[1] as Call["fn"];
  const args = m[2] === "" ? [] : m[2]!.split(",").map((a) => a.trim());
  if (fn === "pick")
    return args.length > 0 && args.every(Boolean)
      ? { fn, args }
      : { problem: `random.pick needs words to pick from, like {{ random.pick(red, green, blue) }}` };
  const nums = args.map(Number);
  if (args.length !== 2 || nums.some((n) => !Number.isFinite(n)) || nums[0]! > nums[1]!)
    return { problem: `random.${fn} takes a range min ≤ max, like {{ random.${fn}(1, 150) }}` };
  if (fn === "int" && !nums.every(Number.isInteger)) return { problem: `random.int takes whole numbers, like {{ random.int(1, 150) }} (or use random.float)` };
  return { fn, args };
}

function callGetter({ fn, args }: Call): Getter {
  if (fn === "pick") return () => args[Math.floor(Math.random() * args.length)];
  const [min, max] = args.map(Number) as [number, number];
  if (fn === "int") return () => min + Math.floor(Math.random() * (max - min + 1));
  return () => min + Math.random() * (max - min);
}

/** What a template may read; the agent fills one per connection (msg.* per message). */
export interface TemplateContext {
  connIndex: number;
  connRoom: string | undefined;
  msgId: string;
  msgSeq: number;
  data: Readonly<Record<string, unknown>> | undefined;
  vars: Readonly<Record<string, unknown>>;
}

type Getter = (ctx: TemplateContext) => unknown;

const hex = (bytes: number): string => {
  let s = "";
  for (let i = 0; i < bytes; i++)
    s += Math.floor(Math.random() * 256)
      .toString(16)
      .padStart(2, "0");
  return s;
};

function getter(name: string): Getter {
  const call = parseCall(name);
  if (call && "fn" in call) return callGetter(call);
  switch (name) {
    case "conn.index":
      return (c) => c.connIndex;
    case "conn.room":
      return (c) => c.connRoom;
    case "msg.id":
      return (c) => c.msgId;
    case "msg.seq":
      return (c) => c.msgSeq;
    case "msg.number":
      return (c) => c.msgSeq + 1;
    case "random.int":
      return () => Math.floor(Math.random() * 2 ** 31);
    case "random.uuid":
      return () => crypto.randomUUID();
    case "random.hex":
      return () => hex(8);
    case "time.ms":
      return () => Date.now();
  }
  const key = name.slice(name.indexOf(".") + 1);
  if (name.startsWith("data.")) return (c) => c.data?.[key];
  const [first, ...fields] = key.split(".") as [string, ...string[]];
  if (fields.length === 0) return (c) => c.vars[first];
  // Into a captured object: vars.order.id, vars.items.0.sku (a missing field renders empty).
  return (c) => {
    let v: unknown = c.vars[first];
    for (const f of fields) v = v !== null && typeof v === "object" ? (v as Record<string, unknown>)[f] : undefined;
    return v;
  };
}

/** The variables a string uses, and the problems with them (unknown names, bad syntax). */
export function templateNames(text: string): { names: string[]; problems: string[] } {
  const names: string[] = [];
  const problems: string[] = [];
  for (const m of text.matchAll(HOLE)) {
    const name = m[1]!;
    const call = parseCall(name);
    if (call) {
      if ("problem" in call) problems.push(call.problem);
      else names.push(`random.${call.fn}`);
    } else if (NAME.test(name)) names.push(name);
    else
      problems.push(
        `unknown variable {{ ${name} }}: use conn.index, conn.room, msg.id, msg.seq, msg.number, data.<column>, vars.<capture> (or vars.<capture>.<field>), random.int, random.int(min, max), random.float(min, max), random.pick(a, b), random.uuid, random.hex or time.ms`,
      );
  }
  const stray = text.replace(HOLE, "");
  if (stray.includes("{{") || stray.includes("}}")) problems.push("unbalanced braces: write a variable as {{ name }}, like {{ msg.id }}");
  return { names, problems };
}

/** Every template string inside a JSON value (object keys are not templates), with its path. */
export function templateStrings(value: unknown, path: (string | number)[] = []): { path: (string | number)[]; text: string }[] {
  if (typeof value === "string") return [{ path, text: value }];
  if (Array.isArray(value)) return value.flatMap((v, i) => templateStrings(v, [...path, i]));
  if (value !== null && typeof value === "object") return Object.entries(value).flatMap(([k, v]) => templateStrings(v, [...path, k]));
  return [];
}

const text = (v: unknown): string => (v === undefined || v === null ? "" : typeof v === "string" ? v : typeof v === "object" ? JSON.stringify(v) : String(v));

/** Compiles a text template; rendering costs one concatenation per part. */
export function compileText(template: string): (ctx: TemplateContext) => string {
  const parts: (string | Getter)[] = [];
  let last = 0;
  for (const m of template.matchAll(HOLE)) {
    if (m.index > last) parts.push(template.slice(last, m.index));
    parts.push(getter(m[1]!));
    last = m.index + m[0].length;
  }
  if (last < template.length) parts.push(template.slice(last));
  if (parts.length === 0) return () => "";
  if (parts.length === 1) {
    const only = parts[0]!;
    return typeof only === "string" ? () => only : (ctx) => text(only(ctx));
  }
  return (ctx) => {
    let s = "";
    for (const p of parts) s += typeof p === "string" ? p : text(p(ctx));
    return s;
  };
}

const WHOLE = /^\{\{\s*([^{}]*?)\s*\}\}$/;

/** Compiles a JSON template to a function building the value; constant subtrees are built once. */
export function compileValue(template: unknown): (ctx: TemplateContext) => unknown {
  if (typeof template === "string") {
    const whole = WHOLE.exec(template);
    if (whole) return getter(whole[1]!);
    if (!template.includes("{{")) return () => template;
    return compileText(template);
  }
  if (Array.isArray(template)) {
    // Constant subtrees are shared, not copied: drivers only serialize what they are given.
    if (templateStrings(template).every((s) => !s.text.includes("{{"))) return () => template;
    const items = template.map(compileValue);
    return (ctx) => items.map((f) => f(ctx));
  }
  if (template !== null && typeof template === "object") {
    if (templateStrings(template).every((s) => !s.text.includes("{{"))) return () => template;
    const entries = Object.entries(template).map(([k, v]) => [k, compileValue(v)] as const);
    return (ctx) => {
      const out: Record<string, unknown> = {};
      for (const [k, f] of entries) out[k] = f(ctx);
      return out;
    };
  }
  return () => template;
}
