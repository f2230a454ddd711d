import type { Run } from "./run";
import { thresholdExpression } from "./plan";

/**
 * The JUnit XML report of a run, shared by the CLI (`volley run --junit`) and the REST API
 * (`GET /api/v1/runs/{id}/junit.xml`), so CI sees the same report either way.
 */

function runElapsedMs(run: Run, now: number): number {
  const start = Date.parse(run.startedAt ?? run.createdAt);
  const end = run.endedAt ? Date.parse(run.endedAt) : now;
  return Math.max(0, end - start);
}

// XML 1.0 forbids most control characters even when escaped; a server's error text may contain them.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching those control characters is the point.
const INVALID_XML_CHARS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;

/** Escapes text for an XML attribute value or element content. */
export function escapeXml(value: string): string {
  return value
    .replace(INVALID_XML_CHARS, "\uFFFD")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}

const attrs = (a: Record<string, string | number>) =>
  Object.entries(a)
    .map(([k, v]) => ` ${k}="${escapeXml(String(v))}"`)
    .join("");

interface TestCase {
  name: string;
  outcome: { kind: "pass" } | { kind: "failure" | "error" | "skipped"; type: string; message: string; detail?: string };
}

/**
 * JUnit XML for CI: one testsuite for the run, one testcase per threshold (a failure when it
 * failed) and one "run completed" testcase that errors when the run errored, was aborted, ended
 * degraded or inconclusive, so a CI report separates "the server got slow" from "the test could not
 * run" or "could not judge".
 */
export function runToJunit(run: Run, runUrl: string): string {
  const cases: TestCase[] = [];
  if (run.summary) {
    for (const t of run.summary.thresholds) {
      const actual = t.actual === null ? "no value" : String(t.actual);
      cases.push({
        name: t.expression,
        outcome: t.ok
          ? { kind: "pass" }
          : { kind: "failure", type: t.kind === "sanity" ? "sanity" : "threshold", message: t.message, detail: `${t.message}\nactual: ${actual}\n${runUrl}` },
      });
    }
  } else {
    // Nothing was measured, so no threshold could be judged: report them as skipped, not passed.
    for (const expression of run.plan.thresholds.map(thresholdExpression)) {
      cases.push({
        name: expression,
        outcome: { kind: "skipped", type: "not-measured", message: `not evaluated: the run ${run.status} before anything was measured` },
      });
    }
  }
  // Degraded: some agent was lost, so the load was not the plan's; inconclusive: nothing decided the
  // verdict on the server's account. Either way CI must not read it as a clean run.
  const ended = run.status === "errored" || run.status === "aborted" || run.status === "degraded" || run.status === "inconclusive";
  cases.push({
    name: "run completed",
    outcome: ended
      ? {
          kind: "error",
          type: run.status,
          message: run.reason ?? `the run ${run.status}`,
          detail: `run ${run.id} ${run.status}: ${run.reason ?? "no reason given"}\n${runUrl}`,
        }
      : { kind: "pass" },
  });

  const count = (kind: string) => cases.filter((c) => c.outcome.kind === kind).length;
  const seconds = (runElapsedMs(run, Date.now()) / 1000).toFixed(3);
  const classname = `volley.${run.name}`;
  const body = cases.map((c) => {
    const open = `    <testcase${attrs({ classname, name: c.name, time: c.name === "run completed" ? seconds : "0" })}`;
    if (c.outcome.kind === "pass") return `${open}/>`;
    const { kind, type, message, detail } = c.outcome;
    const inner = kind === "skipped" ? `<skipped${attrs({ message })}/>` : `<${kind}${attrs({ message, type })}>${escapeXml(detail ?? message)}</${kind}>`;
    return `${open}>\n      ${inner}\n    </testcase>`;
  });
  const totals = { tests: cases.length, failures: count("failure"), errors: count("error"), skipped: count("skipped"), time: seconds };
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites${attrs({ name: "volley", ...totals })}>`,
    `  <testsuite${attrs({ name: run.name, id: run.id, ...totals, timestamp: run.startedAt ?? run.createdAt })}>`,
    `    <properties>`,
    `      <property${attrs({ name: "volley.run.id", value: run.id })}/>`,
    `      <property${attrs({ name: "volley.run.status", value: run.status })}/>`,
    `      <property${attrs({ name: "volley.run.url", value: runUrl })}/>`,
    // A damaged stored histogram left out of the percentiles: CI sees the verdict was read without it.
    ...(run.summary?.leftOut ? [`      <property${attrs({ name: "volley.run.leftOut", value: run.summary.leftOut.message })}/>`] : []),
    `    </properties>`,
    ...body,
    `  </testsuite>`,
    `</testsuites>`,
    ``,
  ].join("\n");
}
