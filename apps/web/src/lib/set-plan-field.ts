import { isMap, isNode, isScalar, parseDocument, stringify, type Document } from "yaml";

type FieldPath = readonly (string | number)[];

/** Each way to write a value, tried in turn: as the author quoted it first, then plain, then JSON (valid YAML anywhere). */
function spellings(value: unknown, quoted?: string): string[] {
  if (typeof value === "number") return [String(value)];
  const all = [stringify(value, { lineWidth: 0, collectionStyle: "flow" }).trimEnd(), JSON.stringify(value)];
  if (typeof value === "string" && quoted === "QUOTE_DOUBLE") all.unshift(JSON.stringify(value));
  if (typeof value === "string" && quoted === "QUOTE_SINGLE") all.unshift(`'${value.replaceAll("'", "''")}'`);
  return all;
}

/** Column of the line `at` is on, counted from the line's start. */
const columnOf = (text: string, at: number) => at - (text.lastIndexOf("\n", at - 1) + 1);

/**
 * Candidate texts with the field written in place, touching only its own characters: the value
 * replaced where the field exists; else `key: value` added to the nearest map on its path that
 * exists (flow `{ … }` or block), the value a flow map when more of the path is missing.
 */
function inPlaceEdits(text: string, doc: Document, path: FieldPath, value: string | number): string[] {
  const node = doc.getIn(path, true);
  if (isScalar(node) && node.range) {
    const [from, to] = node.range;
    return spellings(value, node.type).map((s) => text.slice(0, from) + s + text.slice(to));
  }
  if (node !== undefined) return [];
  let depth = path.length - 1;
  while (depth > 0 && doc.getIn(path.slice(0, depth), true) === undefined) depth--;
  const parent = depth > 0 ? doc.getIn(path.slice(0, depth), true) : doc.contents;
  const key = path[depth];
  if (!isMap(parent) || !parent.range || typeof key !== "string") return [];
  const nested = path.slice(depth + 1).reduceRight<unknown>((inner, k) => ({ [k]: inner }), value);
  return spellings(nested).flatMap((spelled) => {
    const pair = `${key}: ${spelled}`;
    if (parent.flow) {
      const close = text.lastIndexOf("}", parent.range![1]);
      if (close < parent.range![0]) return [];
      const before = text.slice(0, close).trimEnd();
      return [`${before}${before.endsWith("{") ? " " : ", "}${pair} ${text.slice(close)}`];
    }
    const first = parent.items[0]?.key;
    const last = parent.items.at(-1);
    if (!isScalar(first) || !first.range) return [];
    const lastEnd = (isNode(last?.value) ? last.value.range?.[1] : undefined) ?? parent.range![1];
    // A block collection's range ends after its last newline; the line to add after is the one before.
    const lineEnd = text[lastEnd - 1] === "\n" ? lastEnd - 1 : text.indexOf("\n", lastEnd);
    const at = lineEnd === -1 ? text.length : lineEnd;
    return [`${text.slice(0, at)}\n${" ".repeat(columnOf(text, first.range[0]))}${pair}${text.slice(at)}`];
  });
}

/**
 * The plan's YAML with one field set, as the form editor writes it: only that field's characters
 * change, so the author's comments, alignment, quoting and order stay exactly as written. Each
 * candidate is kept only if it parses to the same data as the Document API's setIn would give; when
 * none does (the field's parent map is missing too, say), the Document API's own text is used,
 * which keeps comments and order but may respace them. Null when the YAML does not parse.
 */
export function setPlanField(text: string, path: FieldPath, value: string | number): string | null {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) return null;
  const edited = doc.clone();
  edited.setIn(path, value);
  const want = JSON.stringify(edited.toJS());
  for (const candidate of inPlaceEdits(text, doc, path, value)) {
    const check = parseDocument(candidate);
    if (check.errors.length === 0 && JSON.stringify(check.toJS()) === want) return candidate;
  }
  return edited.toString();
}
