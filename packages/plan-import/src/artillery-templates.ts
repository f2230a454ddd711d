import { mapStrings } from "./json-leaves";

/** What an Artillery `{{ name }}` may refer to, and so which Volley variable it becomes. */
export interface TemplateScope {
  /** Payload (CSV) fields → data.<field>. */
  dataFields: Set<string>;
  /** Captured so far → vars.<name>. */
  captures: Set<string>;
  /** config.variables: a value (constant) inlined. */
  constants: Map<string, unknown>;
  /** Inside a loop (an open-loop message): $loopCount → msg.seq. */
  inLoop: boolean;
  notes: string[];
  /** Where the template is, for notes. */
  where: string;
}

const HOLE = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** An Artillery template string in Volley's variables; what cannot map becomes a <placeholder> with a note. */
export function convertText(text: string, scope: TemplateScope): string {
  return text.replace(HOLE, (_whole, expr: string) => convertExpression(expr.trim(), scope));
}

function convertExpression(expr: string, scope: TemplateScope): string {
  const fn = /^\$(\w+)\s*\((.*)\)$/.exec(expr);
  const name = fn ? `$${fn[1]}` : expr;
  switch (name) {
    case "$randomNumber": {
      // $randomNumber(min, max): both ends included, as Volley's random.int(min, max).
      const range = fn?.[2]?.split(",").map((a) => Number(a.trim()));
      if (range && range.length === 2 && range.every(Number.isInteger) && range[0]! <= range[1]!) return `{{ random.int(${range[0]}, ${range[1]}) }}`;
      if (fn && fn[2]!.trim() !== "")
        scope.notes.push(`${scope.where}: {{ ${expr} }} became {{ random.int }} (0 to 2^31−1): its range is not two whole numbers`);
      return "{{ random.int }}";
    }
    case "$randomString":
      return "{{ random.hex }}";
    case "$uuid":
    case "$randomUUID":
      return "{{ random.uuid }}";
    case "$timestamp":
    case "$now":
      return "{{ time.ms }}";
    case "$loopCount":
    case "$loopIndex":
      if (scope.inLoop) return "{{ msg.seq }}";
      scope.notes.push(`${scope.where}: {{ ${expr} }} is outside a loop; it became 0`);
      return "0";
  }
  if (scope.dataFields.has(expr)) return `{{ data.${expr} }}`;
  if (scope.captures.has(expr)) return `{{ vars.${expr} }}`;
  // A field of a captured object (Artillery's {{ chosenMovie.id }}): read into the capture.
  const [head, ...fields] = expr.split(".");
  if (fields.length > 0 && scope.captures.has(head!) && fields.every((f) => /^[\w-]+$/.test(f))) return `{{ vars.${expr} }}`;
  if (scope.constants.has(expr)) {
    const v = scope.constants.get(expr);
    return typeof v === "string" ? v : JSON.stringify(v);
  }
  if (expr === "target" || expr === "$target") return "";
  scope.notes.push(
    `${scope.where}: {{ ${expr} }} has no Volley equivalent (functions, $environment, $processEnvironment, $loopElement and helpers do not carry over); it became the text <${expr}>: replace it`,
  );
  return `<${expr}>`;
}

/**
 * A JSON value with its Artillery templates converted. A string that is exactly one `{{ x }}`
 * of a constant keeps the constant's type, as Artillery does.
 */
export function convertValue<T>(value: T, scope: TemplateScope): T {
  return mapStrings(value, (s) => {
    const whole = /^\{\{\s*([^{}]*?)\s*\}\}$/.exec(s);
    if (whole && scope.constants.has(whole[1]!.trim())) {
      const v = scope.constants.get(whole[1]!.trim());
      if (typeof v !== "string") return v as unknown as string;
    }
    return convertText(s, scope);
  });
}

/** config.variables: one value each (a list picks its first, with a note; Artillery picks one at random per user). */
export function constantsOf(variables: Record<string, unknown> | undefined, notes: string[]): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [k, v] of Object.entries(variables ?? {})) {
    if (Array.isArray(v) && v.length > 1 && v.every((x) => (typeof x === "string" && /^[\w.@:/-]+$/.test(x)) || typeof x === "number")) {
      // Artillery picks one per user: so does random.pick (per use).
      out.set(k, `{{ random.pick(${v.join(", ")}) }}`);
      notes.push(`config.variables.${k} lists ${v.length} values: each use picks one at random ({{ random.pick(…) }}; Artillery picks once per user)`);
    } else if (Array.isArray(v)) {
      out.set(k, v[0]);
      if (v.length > 1)
        notes.push(
          `config.variables.${k} lists ${v.length} values (Artillery picks one per user); the plan uses the first, ${JSON.stringify(v[0])}: list them in flow.data to vary them`,
        );
    } else out.set(k, v);
  }
  return out;
}
