import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS, intervalFrameSchema, runSummarySchema } from "@volley/contracts";
import { mergeEncoded } from "@volley/metrics";
import { startSocketclusterPingpong, startWsEchoServer, type WsEchoServer } from "@volley/targets";
import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";
import { runAgentCli } from "./cli-process";

let dir: string;
let server: WsEchoServer;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "volley-cli-"));
  server = await startWsEchoServer({ port: 0 });
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

function planFile(name: string, body: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, body);
  return file;
}

const smallPlan = (url: string, thresholds = "[]") => `
name: cli test
target: { url: "${url}", connectTimeout: 2s }
connections: { count: 5, rate: 1000 }
scenario: { kind: echo, message: { rate: 10 }, duration: 1s }
thresholds: ${thresholds}
`;

const cli = (args: string[]) => runAgentCli(args, { timeoutMs: 25_000 });

describe("volley-agent run", { timeout: 30_000 }, () => {
  it("shows a flow's setup steps, events and unmatched samples", async () => {
    const app = await startSocketclusterPingpong();
    try {
      // The pongs are the replies (in order); the ready check in setup is a real round trip too.
      const plan = `
name: cli flow
target: { url: "${app.url}", protocol: socketcluster, connectTimeout: 2s }
connections: { count: 2, rate: 1000 }
scenario: { kind: echo, message: { rate: 5, timeout: 3s }, duration: 1s }
flow:
  setup:
    - send: { name: hello, event: ping, json: {} }
    - waitFor: { name: first-pong, event: pong, timeout: 3s }
  messages: [{ event: ping, json: { n: "{{ msg.seq }}" }, reply: { event: pong } }]
`;
      const r = await cli(["run", planFile("flow.yaml", plan)]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/setup hello +│ 2 /);
      expect(r.stdout).toMatch(/setup first-pong +│ 2 /);
      const stats = app.stats();
      // Every pong but the two the setup waited for answered a message of the run.
      expect(r.stdout).toMatch(new RegExp(`│ pong +│ ${stats.pongs - 2} +│ 0 `));
    } finally {
      await app.close();
    }
  });

  it("--json prints only the summary, in the API's shape, and exits 0 when it passed", async () => {
    const out = path.join(dir, "summary.json");
    const r = await cli(["run", planFile("ok.yaml", smallPlan(server.url, '["messages.lost == 0"]')), "--json", "--out", out]);
    expect(r.code, r.stderr).toBe(0);
    const summary = runSummarySchema.parse(JSON.parse(r.stdout));
    expect(summary.messages.sent).toBeGreaterThan(0);
    expect(summary.messages.received).toBe(summary.messages.sent);
    expect(summary.thresholds.filter((t) => t.kind !== "sanity")).toEqual([expect.objectContaining({ expression: "messages.lost == 0", ok: true })]);
    expect(summary.thresholds.filter((t) => t.kind === "sanity").every((t) => t.ok)).toBe(true);
    expect(r.stderr).toMatch(/sent\/s/); // progress goes to stderr, never into the JSON
  });

  it("--frames writes every interval frame as a JSON line: the merged histograms hold exactly the summary's round trips", async () => {
    const framesFile = path.join(dir, "frames.jsonl");
    const r = await cli(["run", planFile("frames.yaml", smallPlan(server.url)), "--json", "--frames", framesFile]);
    expect(r.code, r.stderr).toBe(0);
    const summary = runSummarySchema.parse(JSON.parse(r.stdout));
    const frames = readFileSync(framesFile, "utf8")
      .trimEnd()
      .split("\n")
      .map((line) => intervalFrameSchema.parse(JSON.parse(line)));
    expect(frames.map((f) => f.seq)).toEqual(frames.map((_, i) => i));
    expect(frames.reduce((n, f) => n + (f.counters[COUNTERS.sent] ?? 0), 0)).toBe(summary.messages.sent);
    const latency = mergeEncoded(frames.flatMap((f) => f.histograms[HISTOGRAMS.messageLatency] ?? []));
    expect(latency.totalCount).toBe(summary.messages.received);
    expect(latency.totalCount).toBeGreaterThan(0);
  });

  it("exits 2 before running when --frames or --out cannot be written, naming the flag", async () => {
    const r = await cli(["run", planFile("nowrite.yaml", smallPlan(server.url)), "--frames", path.join(dir, "no-such-dir", "f.jsonl")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/cannot write --frames .*no-such-dir.*ENOENT/);
    expect(r.stderr).not.toMatch(/running "/);
  });

  it("exits 1 when a threshold fails, and prints the table", async () => {
    const r = await cli(["run", planFile("fail.yaml", smallPlan(server.url, '["messages.sent < 1"]'))]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toMatch(/messages\.sent < 1.*FAIL/);
  });

  it("exits 1 when the target answers nothing, even with no thresholds: the default sanity checks say why", async () => {
    // A real WebSocket server that accepts and reads but never answers (an app with other conventions).
    const silent = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await new Promise((r) => silent.once("listening", r));
    let received = 0;
    silent.on("connection", (ws) => ws.on("message", () => received++));
    try {
      const url = `ws://127.0.0.1:${(silent.address() as AddressInfo).port}/`;
      const plan = smallPlan(url).replace("duration: 1s }", "duration: 1s, message: { rate: 10, timeout: 1s } }").replace("message: { rate: 10 }, ", "");
      const r = await cli(["run", planFile("silent.yaml", plan), "--json"]);
      expect(r.code, r.stderr).toBe(1);
      const summary = runSummarySchema.parse(JSON.parse(r.stdout));
      expect(summary.messages.sent).toBe(received); // the server's own count
      expect(summary.messages.lost).toBe(summary.messages.sent);
      const failed = summary.thresholds.filter((t) => !t.ok);
      expect(failed.map((t) => t.kind)).toEqual(["sanity", "sanity"]);
      expect(failed[0]!.message).toMatch(/nothing came back from the target/);
    } finally {
      await new Promise((r) => silent.close(r));
    }
  });

  it("runs a sweep and prints its steps table and the capacity found", async () => {
    const sweep = `
name: cli sweep
target: { url: "${server.url}", connectTimeout: 2s }
connections: { count: 2, rate: 1000 }
scenario: { kind: echo, message: { rate: 10, per: aggregate }, duration: 10s }
sweep: { step: 10, steps: 2, hold: 1s, gap: 1s, stopWhen: { p99: 5s } }
`;
    const r = await cli(["run", planFile("sweep.yaml", sweep)]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/step.*rate.*sent\/s/);
    expect(r.stdout).toMatch(/10\/s per aggregate.*ok/);
    expect(r.stdout).toMatch(/20\/s per aggregate.*ok/);
    // Both steps held: the capacity is a lower bound, said as such.
    expect(r.stdout).toMatch(/capacity \(p99 <= 5000ms\): ≥ 20\/s per aggregate \(step 1, sent [\d.]+\/s\), never broke/);
  });

  it("exits 2, inconclusive, when the agent limited a capacity search's first step: no step was judged", async () => {
    // Far more than one agent thread sends: the first step falls behind and sheds, so the agent limits it.
    const sweep = `
name: cli overload
target: { url: "${server.url}", connectTimeout: 2s }
connections: { count: 20, rate: 1000 }
scenario: { kind: echo, message: { rate: 10, per: aggregate, timeout: 2s }, duration: 10s }
sweep: { from: 1000000, step: 1, steps: 1, hold: 2s, gap: 1s, stopWhen: { p99: 10s } }
sanity: false
`;
    const r = await cli(["run", planFile("overload.yaml", sweep)]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toMatch(/capacity \(p99 <= 10000ms\): not found — no step could be judged: the agent was the bottleneck from the first step/);
    expect(r.stderr).toMatch(
      /^inconclusive: no step of the capacity search could be judged: the step at 1000000\/s per aggregate was limited by the load generator/m,
    );
  });

  it("exits 2 naming the reason when the target refuses connections", async () => {
    const gone = await startWsEchoServer({ port: 0 });
    await gone.close(); // a port that was just free: nothing listens there now
    const r = await cli(["run", planFile("refused.yaml", smallPlan(gone.url)), "--json"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/refused/);
    expect(runSummarySchema.parse(JSON.parse(r.stdout)).connect.failed).toBeGreaterThan(0);
  });

  it("exits 2 on an invalid plan, naming every bad field", async () => {
    const bad = `name: bad\ntarget: { url: "http://x" }\nconnections: { count: 0 }\nscenario: { kind: echo, message: { rate: 1, bytes: 8 }, duration: 1s }\n`;
    const r = await cli(["run", planFile("bad.yaml", bad)]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/target\.url: /);
    expect(r.stderr).toMatch(/connections\.count: /);
    expect(r.stderr).toMatch(/scenario\.message\.bytes: /);
    expect(r.stdout).toBe("");
  });

  it("--source-addresses binds every connection to the list (an address this machine lacks fails them all)", async () => {
    const ok = await cli([
      "run",
      planFile("pool.yaml", smallPlan(server.url, '["connections.failed == 0"]')),
      "--source-addresses",
      "127.0.0.2-127.0.0.3",
      "--json",
    ]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stderr).toMatch(/from 2 source addresses/);
    // 192.0.2.1 is TEST-NET-1: never a local address, so binding it fails and the run errors.
    const foreign = await cli(["run", planFile("foreign.yaml", smallPlan(server.url)), "--source-addresses", "192.0.2.1", "--json"]);
    expect(foreign.code).toBe(2);
    expect(foreign.stderr).toMatch(/EADDRNOTAVAIL/);
    expect(runSummarySchema.parse(JSON.parse(foreign.stdout)).connect.failed).toBe(5);
  });

  it("exits 2 naming --source-addresses when its list is invalid", async () => {
    const r = await cli(["run", planFile("ok2.yaml", smallPlan(server.url)), "--source-addresses", "127.0.0.9-127.0.0.2"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/option '--source-addresses <list>' argument '127\.0\.0\.9-127\.0\.0\.2' is invalid\. range .* runs backwards/);
    expect(r.stdout).toBe("");
  });

  it("rejects an unknown flag by name", async () => {
    const r = await cli(["run", "plan.yaml", "--bogus"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown option '--bogus'/);
  });
});
