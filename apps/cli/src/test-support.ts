import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Run, RunSummary } from "@volley/contracts";
import type { CliIo } from "./io";

/** Helpers shared by the CLI's tests (not part of the CLI). */

export const BIN = fileURLToPath(new URL("../bin/volley.js", import.meta.url));

export const planYaml = (name: string, thresholds: string[] = ["latency.p95 < 200ms", "errors.rate < 1%"]) => `
name: ${JSON.stringify(name)}
target: { url: "ws://127.0.0.1:9001/echo" }
connections: { count: 5, rate: 50 }
scenario: { kind: echo, message: { rate: 10 }, duration: 2s }
thresholds: ${JSON.stringify(thresholds)}
`;

export function tempDir(): string {
  return mkdtempSync(path.join(tmpdir(), "volley-cli-test-"));
}

export function writeFile(dir: string, name: string, text: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

/** The bin as a real process, as users run it (from `cwd`, when given: paths in args are relative to it). */
export function runBin(args: string[], env: Record<string, string> = {}, cwd?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env }, cwd });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** CliIo that records output, for running the CLI in-process. */
export function bufferIo(env: Record<string, string | undefined>, extra: Partial<CliIo> = {}) {
  const out = { stdout: "", stderr: "" };
  const io: CliIo = {
    stdout: (t) => void (out.stdout += t),
    stderr: (t) => void (out.stderr += t),
    stderrIsTTY: false,
    env,
    pollMs: 10,
    ...extra,
  };
  return { io, out };
}

const latency = (p95: number | null) => ({
  count: p95 === null ? 0 : 100,
  min: p95 && 1,
  mean: p95 && 2,
  p50: p95 && 2,
  p90: p95 && 3,
  p95,
  p99: p95 && 5,
  max: p95 && 9,
});

export function summary(thresholds: RunSummary["thresholds"], p95 = 3.2): RunSummary {
  return {
    messages: { sent: 100, received: 99, lost: 1, duplicated: 0, outOfOrder: 0, sendRate: 50, receiveRate: 49.5 },
    latency: latency(p95),
    sendLag: latency(0.1),
    connect: { opened: 5, failed: 0, latency: latency(1) },
    errors: {},
    intervals: { measured: 2, warmup: 0, saturated: 0 },
    thresholds,
  };
}

export function makeRun(overrides: Partial<Run> = {}): Run {
  return {
    id: "run-1",
    status: "passed",
    reason: null,
    name: "smoke",
    plan: {
      name: "smoke",
      target: { url: "ws://127.0.0.1:9001/echo", protocol: "ws", connectTimeout: "10s" },
      connections: { count: 5, rate: 50 },
      scenario: { kind: "echo", message: { bytes: 64, rate: 10, per: "connection", arrival: "constant", timeout: "10s" }, duration: "2s", warmup: 0 },
      thresholds: ["latency.p95 < 200ms"],
      agents: { pool: "default", count: 1 },
    },
    createdAt: "2026-01-01T00:00:00.000Z",
    startedAt: "2026-01-01T00:00:01.000Z",
    endedAt: "2026-01-01T00:00:04.500Z",
    summary: summary([{ expression: "latency.p95 < 200ms", ok: true, actual: 3.2, message: "latency.p95 = 3.2ms < 200ms" }]),
    ...overrides,
  };
}
