import { describe, expect, it } from "vitest";
import { escapeXml, runToJunit } from "./junit";
import { makeRun, summary } from "./test-support";
import { assertWellFormed } from "./xml-well-formed";

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

  it("errors 'run completed' with the reason when the run was inconclusive, though every threshold held", () => {
    const reason = "inconclusive: no step of the capacity search could be judged: the step at 1000/s per aggregate was limited by the load generator";
    const run = makeRun({ status: "inconclusive", reason });
    const xml = runToJunit(run, URL);
    assertWellFormed(xml);
    expect(xml).toContain(`<error message="${reason}" type="inconclusive">`);
    expect(xml).toContain('tests="2" failures="0" errors="1" skipped="0"');
    expect(xml).toContain('<property name="volley.run.status" value="inconclusive"/>');
  });

  it("escapes a hostile run name everywhere it appears", () => {
    const name = `a<b>&'c" ]]> </testsuite>`;
    const xml = runToJunit(makeRun({ name, status: "aborted", reason: "aborted by user" }), URL);
    assertWellFormed(xml);
    expect(xml).toContain(`name="${escapeXml(name)}"`);
    expect(xml).toContain('<error message="aborted by user" type="aborted">');
  });
});
