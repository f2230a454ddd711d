import { readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createRunBodySchema, planSchema, runSchema, thresholdExpression, type Run } from "@volley/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./cli";
import { waitBudgetMs } from "./run-command";
import { bufferIo, makeRun, planYaml, runBin, summary, tempDir, writeFile } from "./test-support";

/**
 * A fake Volley web app: POST /api/v1/runs and GET /api/v1/runs/{id}. Each GET moves the run one
 * step, queued → running → its final status, which the plan's name picks ("passes", "fails",
 * "errors", "hangs" never ends). Plans named "rejected" get the API's 400 error shape.
 */
interface FakeRun {
  run: Run;
  polls: number;
  /** "slow": when its first poll came (epoch ms); it runs 3.5 s from then. */
  startedAt?: number;
}
const runs = new Map<string, FakeRun>();
const requests: { method: string; url: string; authorization: string | undefined }[] = [];
const aborted: string[] = [];
let server: Server;
let base: string;
const dir = tempDir();

async function readBody(req: IncomingMessage): Promise<string> {
  let text = "";
  for await (const chunk of req) text += String(chunk);
  return text;
}

const INCONCLUSIVE = "no step of the capacity search could be judged: the step at 10/s per connection was limited by the load generator, not the server";

function step(fake: FakeRun): Run {
  fake.polls++;
  const { run } = fake;
  if (run.name === "slow") {
    // Like a real run: its elapsed time counts from one start, and it ends on its own clock, not after N polls.
    fake.startedAt ??= Date.now();
    const startedAt = new Date(fake.startedAt).toISOString();
    if (Date.now() - fake.startedAt < 3500) return { ...run, status: "running", startedAt, summary: summary([], 4.1) };
    return { ...run, status: "passed", startedAt, endedAt: new Date().toISOString(), summary: summary([], 4.1) };
  }
  if (fake.polls === 1 || run.name === "hangs") return run.name === "hangs" && fake.polls > 1 ? { ...run, status: "running", summary: summary([]) } : run;
  if (fake.polls === 2) return { ...run, status: "running", startedAt: new Date().toISOString(), summary: summary([], 4.1) };
  const final = { passes: "passed", fails: "failed", errors: "errored", inconclusive: "inconclusive" }[run.name] as Run["status"];
  const thresholds = run.plan.thresholds
    .map(thresholdExpression)
    .map((expression) => ({ expression, ok: final !== "failed", actual: 4.1, message: `${expression}: actual 4.1` }));
  return {
    ...run,
    status: final,
    reason:
      final === "errored" ? "agent lost: the agent disconnected" : final === "failed" ? "1 threshold failed" : final === "inconclusive" ? INCONCLUSIVE : null,
    startedAt: new Date(Date.now() - 2000).toISOString(),
    endedAt: new Date().toISOString(),
    summary: final === "errored" ? null : summary(thresholds, 4.1),
  };
}

beforeAll(async () => {
  server = createServer(async (req, res) => {
    requests.push({ method: req.method ?? "", url: req.url ?? "", authorization: req.headers.authorization });
    const send = (status: number, body: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    const body = await readBody(req);
    const denied = { error: { code: "unauthenticated", message: 'the API token is unknown or revoked — send "Authorization: Bearer <token>"' } };
    if (req.headers.authorization === "Bearer vly_revoked") return send(401, denied);
    if (req.method === "POST" && req.url === "/api/v1/runs") {
      const parsed = createRunBodySchema.safeParse(JSON.parse(body));
      if (!parsed.success) return send(400, { error: { code: "invalid_body", message: "plan is not valid" } });
      if (parsed.data.plan.name === "needs-token" && !req.headers.authorization) return send(401, denied);
      if (parsed.data.plan.name === "rejected") return send(400, { error: { code: "invalid_body", message: "plan.target.url: this host is not verified" } });
      const id = `run-${runs.size + 1}`;
      const run = makeRun({
        id,
        name: parsed.data.plan.name,
        plan: parsed.data.plan,
        status: "queued",
        startedAt: null,
        endedAt: null,
        summary: null,
        createdAt: new Date().toISOString(),
      });
      runs.set(id, { run, polls: 0 });
      return send(201, { id });
    }
    const m = /^\/api\/v1\/runs\/([^/]+)(\/abort)?$/.exec(req.url ?? "");
    const fake = m && runs.get(decodeURIComponent(m[1]!));
    if (!fake) return send(404, { error: { code: "not_found", message: `run ${m?.[1]} does not exist` } });
    if (req.method === "POST" && m[2]) {
      aborted.push(fake.run.id);
      return send(202, { id: fake.run.id, status: "aborted", abort: "done" });
    }
    if (req.method === "GET" && !m[2]) return send(200, step(fake));
    return send(405, { error: { code: "method_not_allowed", message: "no" } });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

const plan = (name: string) => writeFile(dir, `${name}.yaml`, planYaml(name));

describe("volley run --wait against a Volley server", () => {
  it("exits 0 when the run passed, shows progress on stderr and prints the summary and run URL", async () => {
    const { io, out } = bufferIo({ VOLLEY_URL: `${base}/`, VOLLEY_TOKEN: "vly_secret" });
    const code = await runCli(["run", plan("passes"), "--wait"], io);
    expect(code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/^run run-\d+ queued: http:\/\/127\.0\.0\.1:\d+\/runs\/run-\d+$/m);
    expect(out.stdout).toMatch(/PASSED/);
    expect(out.stdout).toContain("✓ latency.p95 < 200ms");
    expect(out.stderr).toMatch(/^queued \d+s$/m);
    expect(out.stderr).toMatch(/^running \d+s · sent 100 · received 99 · p95 4\.1ms$/m);
    expect(requests.filter((r) => r.url.startsWith("/api/v1/runs")).every((r) => r.authorization === "Bearer vly_secret")).toBe(true);
  });

  it("exits 2 on 401 and says to set VOLLEY_TOKEN, or that the one set was refused", async () => {
    const missing = bufferIo({ VOLLEY_URL: base });
    expect(await runCli(["run", plan("needs-token"), "--wait"], missing.io)).toBe(2);
    expect(missing.out.stderr).toMatch(/Volley answered 401 unauthenticated: .* — set VOLLEY_TOKEN to an API token/);
    const refused = bufferIo({ VOLLEY_URL: base, VOLLEY_TOKEN: "vly_revoked" });
    expect(await runCli(["run", plan("passes"), "--wait"], refused.io)).toBe(2);
    expect(refused.out.stderr).toMatch(/— VOLLEY_TOKEN was refused: create a new API token/);
  });

  it("exits 1 when thresholds failed, and the JUnit report has the failure", async () => {
    const junit = `${dir}/fails.xml`;
    const { io, out } = bufferIo({ VOLLEY_URL: base });
    const code = await runCli(["run", plan("fails"), "--wait", "--junit", junit], io);
    expect(code, out.stderr).toBe(1);
    expect(out.stdout).toContain("✗ latency.p95 < 200ms");
    const xml = readFileSync(junit, "utf8");
    expect(xml).toContain('failures="2" errors="0"');
    expect(xml).toContain('<testcase classname="volley.fails" name="run completed"');
  });

  it("exits 2 when the run was inconclusive, printing why, and the JUnit report errors with the reason", async () => {
    const junit = `${dir}/inconclusive.xml`;
    const { io, out } = bufferIo({ VOLLEY_URL: base });
    const code = await runCli(["run", plan("inconclusive"), "--wait", "--junit", junit], io);
    expect(code, out.stderr).toBe(2);
    expect(out.stdout).toContain("INCONCLUSIVE");
    expect(out.stdout).toContain(`reason     ${INCONCLUSIVE}`);
    expect(readFileSync(junit, "utf8")).toContain(`<error message="${INCONCLUSIVE}" type="inconclusive">`);
  });

  it("exits 2 when the run errored; --json prints only the run JSON to stdout", async () => {
    const junit = `${dir}/errors.xml`;
    const { io, out } = bufferIo({ VOLLEY_URL: base });
    const code = await runCli(["run", plan("errors"), "--wait", "--json", "--junit", junit], io);
    expect(code, out.stderr).toBe(2);
    const run = runSchema.parse(JSON.parse(out.stdout));
    expect(run).toMatchObject({ status: "errored", reason: "agent lost: the agent disconnected", summary: null });
    expect(out.stderr).toContain(`queued: ${base}/runs/${run.id}`);
    expect(readFileSync(junit, "utf8")).toContain('<error message="agent lost: the agent disconnected" type="errored">');
  });

  it("without --wait exits 0 after the 201; with --json prints {id, url}", async () => {
    const { io, out } = bufferIo({ VOLLEY_URL: base });
    expect(await runCli(["run", plan("hangs"), "--json"], io)).toBe(0);
    const { id, url } = JSON.parse(out.stdout) as { id: string; url: string };
    expect(url).toBe(`${base}/runs/${id}`);
  });

  it("exits 2 at --timeout and asks the server to abort the run", async () => {
    const { io, out } = bufferIo({ VOLLEY_URL: base });
    expect(await runCli(["run", plan("hangs"), "--wait", "--timeout", "200ms"], io)).toBe(2);
    expect(out.stderr).toMatch(/timed out: run (run-\d+) had not ended after 200ms/);
    expect(aborted).toContain(/run (run-\d+)/.exec(out.stderr)?.[1]);
  });

  it("exits 2 on Ctrl-C (the signal) and asks the server to abort the run", async () => {
    const controller = new AbortController();
    const { io, out } = bufferIo({ VOLLEY_URL: base }, { signal: controller.signal, stderrIsTTY: true });
    // Interrupt once progress has been drawn, however long the machine takes to get there.
    const poll = setInterval(() => {
      if (out.stderr.includes("running")) controller.abort();
    }, 20);
    const code = await runCli(["run", plan("hangs"), "--wait"], io);
    clearInterval(poll);
    expect(code).toBe(2);
    const id = /interrupted: asked Volley to abort run (run-\d+)/.exec(out.stderr)?.[1];
    expect(aborted).toContain(id);
    // On a terminal, progress redraws one line (carriage return + clear) instead of printing many.
    expect(out.stderr).toContain("\r\x1b[Krunning");
  });

  it("exits 2 with the server's error message when it rejects the plan", async () => {
    const { io, out } = bufferIo({ VOLLEY_URL: base });
    expect(await runCli(["run", plan("rejected"), "--wait"], io)).toBe(2);
    expect(out.stderr).toBe("error: Volley answered 400 invalid_body: plan.target.url: this host is not verified\n");
  });

  it("exits 2 for an invalid VOLLEY_URL, naming the variable", async () => {
    const { io, out } = bufferIo({ VOLLEY_URL: "localhost:3000" });
    expect(await runCli(["run", plan("passes")], io)).toBe(2);
    expect(out.stderr).toMatch(/^error: VOLLEY_URL="localhost:3000" must be an http/);
  });

  it("exits 2 when nothing listens at VOLLEY_URL", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    const { io, out } = bufferIo({ VOLLEY_URL: url });
    expect(await runCli(["run", plan("passes"), "--wait"], io)).toBe(2);
    expect(out.stderr).toMatch(new RegExp(`^error: cannot reach Volley at ${url}: .*ECONNREFUSED.* — is it running\\? set VOLLEY_URL\\n$`));
  });

  it("without a terminal (a CI log) prints a progress line each second, as the README says", async () => {
    // The bin as CI runs it: stderr is a pipe, and it polls at its own default pace.
    const r = await runBin(["run", plan("slow"), "--wait"], { VOLLEY_URL: base });
    expect(r.code, r.stderr).toBe(0);
    const seconds = r.stderr
      .split("\n")
      .map((line) => /^running (\d+)s · sent 100/.exec(line)?.[1])
      .filter((s) => s !== undefined)
      .map(Number);
    // 3.5 s of running: a line for each of its seconds (0 s to 3 s; one may fall on a tick's edge), none twice.
    expect(seconds.length, r.stderr).toBeGreaterThanOrEqual(3);
    expect(new Set(seconds).size).toBe(seconds.length);
    expect(seconds).toEqual([...seconds].sort((a, b) => a - b));
    expect(r.stderr).not.toContain("\r");
  });

  it("works end to end through the bin: --wait --json, exit 1 for failed thresholds", async () => {
    const r = await runBin(["run", plan("fails"), "--wait", "--json"], { VOLLEY_URL: base });
    expect(r.code, r.stderr).toBe(1);
    expect(runSchema.parse(JSON.parse(r.stdout)).status).toBe("failed");
  });
});

describe("--wait's default budget", () => {
  it("is the plan's own length plus an hour, so a two-hour soak is not aborted at the hour", () => {
    const soak = planSchema.parse({
      name: "soak",
      target: { url: "ws://127.0.0.1:9001/echo", connectTimeout: "10s" },
      connections: {
        count: 100,
        stages: [
          { duration: "10m", target: 100 },
          { duration: "110m", target: 100 },
        ],
      },
      scenario: { kind: "echo", message: { rate: 1, timeout: "10s" }, duration: "2h" },
    });
    expect(waitBudgetMs(soak, undefined)).toBe(120 * 60_000 + 10_000 + 10_000 + 60 * 60_000);
    expect(waitBudgetMs(soak, "30m")).toBe(30 * 60_000);
  });
});
