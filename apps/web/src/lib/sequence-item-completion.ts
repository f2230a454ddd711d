import type { CompletionContext, CompletionResult, CompletionSource } from "@codemirror/autocomplete";
import type { JSONSchema7, JSONSchema7Definition } from "json-schema";
import { isPair, isScalar, isSeq, parseDocument, visit, type Node } from "yaml";

const ITEM = Symbol("item");
type Segment = string | typeof ITEM;

/** A schema's alternatives, flattened: the plan's unions (setup step kinds, message kinds) are `anyOf`. */
function variants(def: JSONSchema7Definition | undefined): JSONSchema7[] {
  if (!def || typeof def !== "object") return [];
  const nested = [...(def.anyOf ?? []), ...(def.oneOf ?? []), ...(def.allOf ?? [])];
  return [def, ...nested.flatMap(variants)];
}

function step(schemas: JSONSchema7[], seg: Segment): JSONSchema7[] {
  return schemas.flatMap((s) => {
    if (seg === ITEM) return Array.isArray(s.items) ? s.items.flatMap(variants) : variants(s.items);
    const prop = s.properties?.[seg];
    if (prop) return variants(prop);
    return typeof s.additionalProperties === "object" ? variants(s.additionalProperties) : [];
  });
}

/** The key path of the sequence item at `pos` and the word typed so far, when `pos` is at `- <word>`. */
function itemAt(text: string, pos: number): { path: Segment[]; from: number } | null {
  const lineStart = text.lastIndexOf("\n", pos - 1) + 1;
  const typed = /^\s*-\s+([A-Za-z0-9_]*)$/.exec(text.slice(lineStart, pos));
  if (!typed) return null;
  const from = pos - typed[1]!.length;
  let found: Segment[] | null = null;
  visit(parseDocument(text), {
    Scalar(_key, node, ancestors) {
      const parent = ancestors[ancestors.length - 1];
      if (!isSeq(parent) || !node.range || node.range[0] !== from) return undefined;
      // The path to the sequence itself: its own ITEM step is taken by the caller.
      found = [];
      for (let i = 0; i < ancestors.length - 1; i++) {
        const a = ancestors[i];
        if (isPair(a) && isScalar(a.key)) found.push(String(a.key.value));
        else if (isSeq(a as Node)) found.push(ITEM);
      }
      return visit.BREAK;
    },
  });
  return found ? { path: found, from } : null;
}

/**
 * Completes the keys an item of a block sequence may start with, at `- |` and `- wor|`.
 * codemirror-json-schema's YAML completion only offers keys once a line is already `key:`, so a
 * flow's setup steps (`request`, `emit`, `waitFor`, …) and message fields were never offered where
 * a user starts typing a new item.
 */
export function sequenceItemCompletion(schema: JSONSchema7): CompletionSource {
  return (ctx: CompletionContext): CompletionResult | null => {
    const text = ctx.state.doc.toString();
    const at = itemAt(text, ctx.pos);
    if (!at) return null;
    let schemas = variants(schema);
    for (const seg of at.path) schemas = step(schemas, seg);
    const items = step(schemas, ITEM);
    const typed = text.slice(at.from, ctx.pos);
    const keys = new Map<string, string>();
    for (const s of items) {
      for (const [key, def] of Object.entries(s.properties ?? {})) {
        if (key.startsWith(typed) && !keys.has(key)) keys.set(key, typeof def === "object" ? (def.description ?? "") : "");
      }
    }
    if (keys.size === 0) return null;
    return {
      from: at.from,
      options: [...keys].map(([key, info]) => ({ label: key, apply: `${key}: `, type: "property", ...(info ? { info } : {}) })),
      validFor: /^[A-Za-z0-9_]*$/,
    };
  };
}
