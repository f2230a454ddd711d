import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Run } from "@volley/contracts";
import { freePort, repoRoot } from "@volley/devstack";
import { startWsEchoServer } from "@volley/targets";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertWellFormed } from "../../apps/cli/src/xml-well-formed";
import { startStack, type Stack } from "./stack-fixture";

/**
 * The `volley` bin as CI runs it, against a whole running stack: its exit code is the contract a
 * pipeline relies on (0 passed, 1 a threshold failed, 2 the test could not judge), so each code is
 * produced by a real run rather than by a fake API.
 */

const BIN = path.join(repoRoot, "apps", "cli", "bin", "volley.js");
const ECHO_DELAY_MS = 20;

let stack: Stack;
let fast: Awaited<ReturnType<typeof startWsEchoServer>>;
let slow: Awaited<ReturnType<typeof startWsEchoServer>>;
const dir = mkdtempSync(path.join(tmpdir(), "volley-e2e-cli-"));

beforeAll(async () => {
  [fast, slow] = await Promise.all([startWsEchoServer({ port: 0 }), startWsEchoServer({ port: 0, delayMs: ECHO_DELAY_MS })]);
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
  await Promise.all([fast?.close(), slow?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

interface BinResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the bin as a real process; killed (code null) if it outlives timeoutMs, which fails the test. */
function volley(args: string[], env: Record<string, string>, timeoutMs = 90_000): Promise<BinResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: dir, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function planFile(name: string, url: string, thresholds: string[]): string {
  const file = path.join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    `name: ${JSON.stringify(name)}
target: { url: ${JSON.stringify(url)} }
connections: { count: 3, rate: 30 }
scenario: { kind: echo, message: { rate: 10 }, duration: 2s }
thresholds: ${JSON.stringify(thresholds)}
`,
  );
  return file;
}

const env = () => ({ VOLLEY_URL: stack.webUrl, VOLLEY_TOKEN: stack.token });
const explain = (r: BinResult) => `exit ${r.code}\nstderr: ${r.stderr}\n${stack.output.slice(-20).join("\n")}`;

/** `volley run <plan> --wait --junit <xml> --json`: the result, the parsed run and the JUnit text. */
async function runPlan(file: string, junit: string, vars = env()): Promise<BinResult & { run: Run; xml: string }> {
  const r = await volley(["run", file, "--wait", "--junit", junit, "--json", "--timeout", "80s"], vars);
  let run: Run;
  try {
    run = JSON.parse(r.stdout) as Run;
  } catch {
    throw new Error(`stdout is not the run as JSON (${explain(r)})\nstdout: ${r.stdout}`);
  }
  return { ...r, run, xml: readFileSync(junit, "utf8") };
}

const testcases = (xml: string) => [...xml.matchAll(/<testcase [^>]*name="([^"]*)"/g)].map((m) => m[1]);
/** The default sanity checks every run gets after its own thresholds (packages/metrics sanity-checks.ts). */
const SANITY = ["sanity: messages sent &gt; 0", "sanity: replies or deliveries received &gt; 0", "sanity: loss &lt;= 5%"];

describe("volley run --wait exit codes against a running stack", () => {
  it("exits 0 when every threshold passes, with --json on stdout and a JUnit case per threshold", async () => {
    const thresholds = ["latency.p95 < 2s", "errors.rate < 1%"];
    const r = await runPlan(planFile("passes", fast.url, thresholds), path.join(dir, "passes.xml"));
    expect(r.code, explain(r)).toBe(0);
    expect(r.run.status).toBe("passed");
    expect(r.run.summary?.messages.received).toBeGreaterThan(0);
    assertWellFormed(r.xml);
    // One case per threshold and per sanity check, plus the "run completed" case; none failed.
    expect(testcases(r.xml)).toEqual(["latency.p95 &lt; 2s", "errors.rate &lt; 1%", ...SANITY, "run completed"]);
    expect(r.xml).toContain('tests="6" failures="0" errors="0" skipped="0"');
    expect(r.xml).toContain(`<property name="volley.run.id" value="${r.run.id}"/>`);
    // stderr is a pipe here, as in CI: a progress line for each second of the 2 s run, none twice.
    const seconds = [...r.stderr.matchAll(/^running (\d+)s/gm)].map((m) => Number(m[1]));
    expect(seconds.length, r.stderr).toBeGreaterThanOrEqual(2);
    expect(new Set(seconds).size).toBe(seconds.length);
  });

  it("exits 1 when a threshold fails, and the JUnit report carries that failure", async () => {
    // Every echo is held 20 ms, so no median can be under 1 ms.
    const r = await runPlan(planFile("fails", slow.url, ["latency.p50 < 1ms", "errors.rate < 1%"]), path.join(dir, "fails.xml"));
    expect(r.code, explain(r)).toBe(1);
    expect(r.run.status).toBe("failed");
    expect(r.run.summary?.latency.p50).toBeGreaterThanOrEqual(ECHO_DELAY_MS);
    assertWellFormed(r.xml);
    expect(testcases(r.xml)).toEqual(["latency.p50 &lt; 1ms", "errors.rate &lt; 1%", ...SANITY, "run completed"]);
    expect(r.xml).toContain('tests="6" failures="1" errors="0" skipped="0"');
    expect(r.xml).toMatch(/<testcase [^>]*name="latency.p50 &lt; 1ms"[^/]*>\s*<failure [^>]*type="threshold">/);
  });

  it("exits 2 when the agent limited a capacity search's first step: the run is inconclusive, not passed, and JUnit errors with why", async () => {
    // Far more than one agent thread sends: the first step falls behind and sheds, so the agent limits it and no step is judged.
    const file = path.join(dir, "inconclusive.yaml");
    writeFileSync(
      file,
      `name: inconclusive
target: { url: ${JSON.stringify(fast.url)} }
connections: { count: 20, rate: 1000 }
scenario: { kind: echo, message: { rate: 10, per: aggregate, timeout: 2s }, duration: 10s }
sweep: { from: 1000000, step: 1, steps: 1, hold: 2s, gap: 1s, stopWhen: { p99: 10s } }
sanity: false
`,
    );
    const r = await runPlan(file, path.join(dir, "inconclusive.xml"));
    expect(r.code, explain(r)).toBe(2);
    expect(r.run.status).toBe("inconclusive");
    expect(r.run.reason).toMatch(/^no step of the capacity search could be judged: the step at 1000000\/s per aggregate was limited by the load generator/);
    expect(r.run.summary?.capacity).toMatchObject({ rate: null, agentSaturated: true });
    assertWellFormed(r.xml);
    expect(r.xml).toMatch(
      /<testcase [^>]*name="run completed"[^/]*>\s*<error message="no step of the capacity search could be judged[^"]*" type="inconclusive">/,
    );
  });

  it("exits 2 when the target refuses connections: the run errored, its thresholds were never judged", async () => {
    const closed = await freePort();
    const r = await runPlan(planFile("refused", `ws://127.0.0.1:${closed}/echo`, ["latency.p95 < 2s"]), path.join(dir, "refused.xml"));
    expect(r.code, explain(r)).toBe(2);
    expect(r.run.status).toBe("errored");
    expect(r.run.reason).toMatch(/refused/i);
    assertWellFormed(r.xml);
    // Nothing was sent: only "messages sent > 0" is judged (nothing could come back or be lost).
    expect(testcases(r.xml)).toEqual(["latency.p95 &lt; 2s", SANITY[0], "run completed"]);
    expect(r.xml).toMatch(/errors="1"/);
    // The sanity check says so, as a sanity failure beside the run's error.
    expect(r.xml).toMatch(/<testcase [^>]*name="sanity: messages sent &gt; 0"[^/]*>\s*<failure [^>]*type="sanity">/);
  });

  it("exits 2 for an invalid plan file, naming the offending fields, without queueing anything", async () => {
    const file = path.join(dir, "invalid.yaml");
    writeFileSync(file, `name: bad\ntarget: { url: "ftp://nowhere" }\nconnections: { count: 0 }\nscenario: { kind: echo, duration: 2s }\n`);
    const junit = path.join(dir, "invalid.xml");
    const r = await volley(["run", file, "--wait", "--junit", junit, "--json"], env());
    expect(r.code, explain(r)).toBe(2);
    expect(r.stderr).toContain("target.url");
    expect(r.stderr).toContain("connections.count");
    expect(r.stdout).toBe("");
  });

  it("exits 2 with a wrong VOLLEY_TOKEN, and the message names VOLLEY_TOKEN", async () => {
    const file = planFile("wrong-token", fast.url, ["latency.p95 < 2s"]);
    const r = await volley(["run", file, "--wait", "--junit", path.join(dir, "wrong-token.xml"), "--json"], { ...env(), VOLLEY_TOKEN: "vly_not-a-real-token" });
    expect(r.code, explain(r)).toBe(2);
    expect(r.stderr).toContain("VOLLEY_TOKEN");
    expect(r.stdout).toBe("");
  });
});
