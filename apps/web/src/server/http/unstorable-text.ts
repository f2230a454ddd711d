/**
 * PostgreSQL cannot store U+0000 in text or jsonb, and jsonb refuses unpaired UTF-16 surrogates
 * ("\ud800"), which JSON.parse accepts. A body holding either would pass its zod schema and then
 * fail the insert with a 500; this finds the first such string (or key) so the API can answer 400
 * naming the field. Iterative, so a deeply nested body cannot overflow the stack.
 */

// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is one of the characters PostgreSQL cannot store.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

interface Node {
  value: unknown;
  key: string | null;
  parent: Node | null;
}

function pathOf(node: Node): string {
  const parts: string[] = [];
  for (let n: Node | null = node; n; n = n.parent) if (n.key !== null) parts.push(n.key);
  return parts.reverse().join(".") || "(root)";
}

const why = (s: string) => (s.includes("\u0000") ? "contains a NUL character (\\u0000)" : "contains an unpaired UTF-16 surrogate (like \\ud800)");

/** The path and reason of the first string or key that cannot be stored, or null. */
export function findUnstorableText(root: unknown): { path: string; message: string } | null {
  const stack: Node[] = [{ value: root, key: null, parent: null }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const v = node.value;
    if (typeof v === "string") {
      if (UNSTORABLE.test(v)) return { path: pathOf(node), message: `${why(v)}; remove it` };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], key: String(i), parent: node });
    } else if (v !== null && typeof v === "object") {
      for (const [k, child] of Object.entries(v)) {
        if (UNSTORABLE.test(k)) return { path: pathOf({ value: k, key: k.replace(UNSTORABLE, "?"), parent: node }), message: `the key ${why(k)}; remove it` };
        stack.push({ value: child, key: k, parent: node });
      }
    }
  }
  return null;
}
