import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

export const PROMETHEUS_BIN = "/usr/bin/prometheus";
/** Why tests that need a real remote-write receiver skip, or null when it is installed. */
export const prometheusMissing = existsSync(PROMETHEUS_BIN) ? null : `${PROMETHEUS_BIN} not installed (apt-get install -y prometheus)`;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export interface PrometheusReceiver {
  /** The remote-write endpoint. */
  writeUrl: string;
  /** Instant query; the result vector or matrix as Prometheus returns it. */
  query(promql: string): Promise<{ metric: Record<string, string>; value?: [number, string]; values?: [number, string][] }[]>;
  stop(): Promise<void>;
}

/** A real Prometheus (Debian's package) with its remote-write receiver on, its data in a temp dir. */
export async function startPrometheus(): Promise<PrometheusReceiver> {
  const dir = mkdtempSync(path.join(tmpdir(), "volley-prom-"));
  writeFileSync(path.join(dir, "prometheus.yml"), "global:\n  scrape_interval: 1h\n");
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    PROMETHEUS_BIN,
    [
      `--config.file=${path.join(dir, "prometheus.yml")}`,
      `--storage.tsdb.path=${path.join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--web.enable-remote-write-receiver",
      "--log.level=warn",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()).length > 20_000 && (stderr = stderr.slice(-10_000)));
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`prometheus exited ${child.exitCode}: ${stderr.slice(-2000)}`);
    const ready = await fetch(`${base}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) throw new Error(`prometheus not ready within 30 s: ${stderr.slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    writeUrl: `${base}/api/v1/write`,
    async query(promql) {
      const res = await fetch(`${base}/api/v1/query?query=${encodeURIComponent(promql)}&time=${Date.now() / 1000}`);
      const body = (await res.json()) as { status: string; error?: string; data: { result: never[] } };
      if (body.status !== "success") throw new Error(`query ${promql}: ${body.error}`);
      return body.data.result;
    },
    async stop() {
      child.kill("SIGTERM");
      await new Promise((r) => (child.exitCode !== null ? r(null) : child.once("exit", r)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
