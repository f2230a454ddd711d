import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS, intervalFrameSchema, runSummarySchema } from "@volley/contracts";
import { mergeEncoded } from "@volley/metrics";
import { startWsEchoServer, type WsEchoServer } from "@volley/targets";
import { runAgentCli } from "./cli-process";

let dir: string;
let server: WsEchoServer;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "volley-cli-workers-"));
  server = await startWsEchoServer({ port: 0 });
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const cli = (args: string[]) => runAgentCli(args, { timeoutMs: 40_000 });

describe("volley-agent run --workers", { timeout: 45_000 }, () => {
  it("splits the plan across the threads and reports exactly what one thread does: the planned count, echoed by the server, in one frame per second", async () => {
    const plan = path.join(dir, "plan.yaml");
    writeFileSync(
      plan,
      `name: workers\ntarget: { url: "${server.url}", connectTimeout: 5s }\nconnections: { count: 6, rate: 1000 }\nscenario: { kind: echo, message: { rate: 25, per: connection, arrival: constant, timeout: 5s }, duration: 2s }\n`,
    );
    for (const workers of ["3", "0"]) {
      server.resetHoldStats();
      const frames = path.join(dir, `frames-${workers}.jsonl`);
      const r = await cli(["run", plan, "--json", "--workers", workers, "--frames", frames]);
      expect(r.code, r.stderr).toBe(0);
      const summary = runSummarySchema.parse(JSON.parse(r.stdout));
      // 6 connections × 25/s × 2 s from each one's open.
      expect(summary.messages, `--workers ${workers}`).toMatchObject({ sent: 300, received: 300, lost: 0 });
      expect(server.holdStats().count).toBe(300);
      const lines = readFileSync(frames, "utf8")
        .trim()
        .split("\n")
        .map((l) => intervalFrameSchema.parse(JSON.parse(l)));
      expect(lines.map((f) => f.index)).toEqual(lines.map((_, i) => i));
      expect(lines.reduce((n, f) => n + (f.counters[COUNTERS.sent] ?? 0), 0)).toBe(300);
      expect(mergeEncoded(lines.flatMap((f) => f.histograms[HISTOGRAMS.messageLatency] ?? [])).totalCount).toBe(300);
    }
  });

  it("exits 2 naming --workers when it is not a whole number", async () => {
    const r = await cli(["run", "plan.yaml", "--workers", "two"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--workers <n>.*two.*whole number of threads/);
  });
});
