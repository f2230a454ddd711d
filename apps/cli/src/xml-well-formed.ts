/**
 * A small well-formedness check (no XML parser is installed): one root, every tag closed in order,
 * attributes quoted, and no bare `<` or `&` outside of tags and entities. A test helper, shared by
 * junit.test.ts and the end-to-end CLI test (e2e/src/cli-exit-codes.test.ts).
 */
export function assertWellFormed(xml: string): void {
  const body = xml.replace(/^<\?xml [^?]*\?>\s*/, "");
  const stack: string[] = [];
  let roots = 0;
  const token = /<(\/?)([A-Za-z_][\w.-]*)((?:\s+[A-Za-z_][\w.-]*="[^"<]*")*)\s*(\/?)>|([^<]+)/gy;
  let m: RegExpExecArray | null;
  let pos = 0;
  while (pos < body.length && (m = token.exec(body))) {
    pos = token.lastIndex;
    const [, close, name, attrs, selfClose, text] = m;
    if (text !== undefined) {
      if (stack.length === 0 && text.trim() !== "") throw new Error(`text outside the root: ${text}`);
      if (/&(?!(amp|lt|gt|quot|apos|#\d+|#x[0-9a-f]+);)/i.test(text)) throw new Error(`bare & in ${text}`);
      continue;
    }
    if (/&(?!(amp|lt|gt|quot|apos);)/.test(attrs ?? "")) throw new Error(`bare & in attributes of ${name}`);
    if (close) {
      if (stack.pop() !== name) throw new Error(`</${name}> closes the wrong element`);
    } else if (!selfClose) {
      if (stack.length === 0) roots++;
      stack.push(name!);
    } else if (stack.length === 0) roots++;
  }
  if (pos !== body.length) throw new Error(`not well-formed at: ${body.slice(pos, pos + 40)}`);
  if (stack.length) throw new Error(`unclosed: ${stack.join(", ")}`);
  if (roots !== 1) throw new Error(`${roots} root elements`);
}
