import { describe, expect, it } from "vitest";
import { escapeXml, runToJunit } from "./junit";
import { makeRun, summary } from "./test-support";

/**
 * A small well-formedness check (no XML parser is installed): one root, every tag closed in order,
 * attributes quoted, and no bare `<` or `&` outside of tags and entities.
 */
function assertWellFormed(xml: string): void {
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

const URL = "http://volley.test/runs/run-1";

describe("runToJunit", () => {
  it("(the checker itself rejects what it should)", () => {
    expect(() => assertWellFormed("<a><b></a>")).toThrow();
    expect(() => assertWellFormed("<a>x & y</a>")).toThrow();
    expect(() => assertWellFormed('<a b="<"/>')).toThrow();
    expect(() => assertWellFormed("<a/><b/>")).toThrow();
    expect(() => assertWellFormed('<a b="&amp;">x &lt; y</a>')).not.toThrow();
  });

  it("writes one testsuite, a testcase per threshold with a failure for each failed one, and a passing 'run completed'", () => {
    const run = makeRun({
      status: "failed",
      reason: "1 threshold failed",
      summary: summary([
        { expression: "latency.p95 < 200ms", ok: false, actual: 250, message: "latency.p95 = 250ms, not < 200ms" },
        { expression: "errors.rate < 1%", ok: true, actual: 0, message: "errors.rate = 0% < 1%" },
      ]),
    });
    const xml = runToJunit(run, URL);
    assertWellFormed(xml);
    expect(xml.match(/<testsuite /g)).toHaveLength(1);
    expect(xml.match(/<testcase /g)).toHaveLength(3);
    expect(xml).toContain('tests="3" failures="1" errors="0" skipped="0"');
    expect(xml).toContain('<testcase classname="volley.smoke" name="latency.p95 &lt; 200ms" time="0">');
    expect(xml).toContain('<failure message="latency.p95 = 250ms, not &lt; 200ms" type="threshold">');
    expect(xml).toContain('<testcase classname="volley.smoke" name="errors.rate &lt; 1%" time="0"/>');
    expect(xml).toContain('name="run completed" time="3.500"/>');
  });

  it("errors 'run completed' with the reason when the run errored, and skips thresholds never measured", () => {
    const run = makeRun({ status: "errored", reason: 'agent lost: <socket> closed & "gone"\u0001', summary: null });
    const xml = runToJunit(run, URL);
    assertWellFormed(xml);
    expect(xml).toContain('<error message="agent lost: &lt;socket&gt; closed &amp; &quot;gone&quot;\uFFFD" type="errored">');
    expect(xml).toContain("<skipped message=");
    expect(xml).toContain('tests="2" failures="0" errors="1" skipped="1"');
  });

  it("escapes a hostile run name everywhere it appears", () => {
    const name = `a<b>&'c" ]]> </testsuite>`;
    const xml = runToJunit(makeRun({ name, status: "aborted", reason: "aborted by user" }), URL);
    assertWellFormed(xml);
    expect(xml).toContain(`name="${escapeXml(name)}"`);
    expect(xml).toContain('<error message="aborted by user" type="aborted">');
  });
});
