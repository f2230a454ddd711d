/**
 * Many idle WebSocket connections held by ONE agent process: by default 50,000 connections opened
 * at 2,000/s from four source addresses (`--source-addresses 127.0.0.2-127.0.0.5`), each sending
 * one 64-byte message every 30 s, held 40 s after the ramp. One echo target process (core 0) and
 * one `volley-agent run` (core 1), both started through `bash -c "ulimit -n …"` so they get as many
 * file descriptors as this machine allows (each connection is one fd on each side).
 *
 *   node --import tsx bench/idle-many.ts [runs=3] [connections=50000] [connectRate=2000] [timeoutS=10]
 *
 * Where the sandbox's hard fd limit is below the count (20,000 on our dev VMs), run it in the bench
 * VM, whose limits are its own: `bash bench/vm/run.sh node --import tsx bench/idle-many.ts 1 50000 40 180`
 * (software-emulated there, hence the slower ramp and the longer connect and reply timeouts).
 *
 * Reported per run: connections opened / failed (the summary JSON), peak active (the progress
 * lines), the agent's VmRSS from /proc/<pid>/status before the first connection and 2 s before the
 * end of the hold, RSS per held connection, round-trip p50/p99, error counts by class, and the fd
 * limit each process actually got.
 */
import { readFileSync, readdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { AGENT_BIN, median, spawnPinned, type Pinned } from "./lib/spawn-pinned";

const RUNS = Math.max(1, Math.min(9, Number(process.argv[2] ?? 3)));
const CONNS = Math.max(1, Number(process.argv[3] ?? 50_000));
const CONNECT_RATE = Math.max(1, Number(process.argv[4] ?? 2000));
/** The reply timeout, and the connect timeout when longer than the native default of 30 s. */
const TIMEOUT_S = Math.max(1, Number(process.argv[5] ?? 10));
const EVERY_S = 30,
  HOLD_S = 40,
  WANT_NOFILE = 200_000;
const SOURCES = "127.0.0.2-127.0.0.5";
const RAMP_S = Math.ceil(CONNS / CONNECT_RATE);

const status = (pid: number) => readFileSync(`/proc/${pid}/status`, "utf8");
const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(status(pid))![1]) * 1024;
const fdsOf = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;
const nofileOf = (pid: number) => Number(/Max open files\s+(\d+)/.exec(readFileSync(`/proc/${pid}/limits`, "utf8"))![1]);

/** Raises the soft fd limit to WANT_NOFILE, or to the hard limit when that is lower (no CAP_SYS_RESOURCE), then execs. */
const withFds = (args: string[]) => ["bash", "-c", 'ulimit -n "$0" 2>/dev/null || ulimit -n "$(ulimit -Hn)"; exec "$@"', String(WANT_NOFILE), ...args];

const portRange = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
const portsPerSource = portRange[1]! - portRange[0]! + 1;
console.error(`net.ipv4.ip_local_port_range ${portRange.join("-")}: ${portsPerSource} ports per source address, ${4 * portsPerSource} over ${SOURCES}`);

async function startTarget(limitMs: number): Promise<{ p: Pinned; url: string }> {
  const p = spawnPinned(0, withFds([process.execPath, "--import", "tsx", "apps/targets/src/main.ts"]), {
    env: { ...process.env, WS_ECHO_PORT: "0", SOCKETIO_ECHO_PORT: "0", SOCKJS_ECHO_PORT: "0", LOG_LEVEL: "info" },
    limitMs,
  });
  const line = await p.waitFor(/listening on ws:\/\//, 60_000);
  return { p, url: /(ws:\/\/[^\s"]+)/.exec(line)![1]! };
}

interface Row {
  run: number;
  requested: number;
  opened: number;
  failed: number;
  peakActive: number;
  heldActive: number;
  rssBefore: number;
  rssHeld: number;
  bytesPerConn: number;
  p50: number | null;
  p99: number | null;
  sent: number;
  received: number;
  lost: number;
  errors: Record<string, number>;
  agentFds: number;
  targetFds: number;
  agentNofile: number;
  targetNofile: number;
  exit: number | null;
}

const dir = mkdtempSync(path.join(tmpdir(), "volley-bench-"));
const planFile = path.join(dir, "idle-many.yaml");
writeFileSync(
  planFile,
  `name: idle many
target: { url: "TARGET", connectTimeout: ${Math.max(30, TIMEOUT_S)}s }
connections: { count: ${CONNS}, rate: ${CONNECT_RATE} }
scenario: { kind: echo, message: { rate: ${(1 / EVERY_S).toFixed(4)}, bytes: 64, timeout: ${TIMEOUT_S}s }, duration: ${HOLD_S}s }
`,
);

const rows: Row[] = [];
for (let run = 1; run <= RUNS; run++) {
  const runLimitMs = (RAMP_S + HOLD_S + 2 * Math.max(30, TIMEOUT_S) + 120) * 1000;
  const target = await startTarget(runLimitMs + 60_000);
  try {
    const plan = readFileSync(planFile, "utf8").replace("TARGET", target.url);
    const runPlan = path.join(dir, `run-${run}.yaml`);
    writeFileSync(runPlan, plan);
    const a = spawnPinned(1, withFds([process.execPath, AGENT_BIN, "run", runPlan, "--json", "--source-addresses", SOURCES]), { limitMs: runLimitMs });
    const pid = a.child.pid!;
    await a.waitFor(/^running /, 60_000);
    const rssBefore = rssOf(pid);
    const heldAt = RAMP_S + HOLD_S - 2;
    // An agent that dies before the hold (it did once, on EMFILE) must show why, not time out silently.
    const line = await Promise.race([
      a.waitFor(new RegExp(`^\\s*${heldAt}s\\s+conns`), (heldAt + 60) * 1000),
      a.exited.then((code) => Promise.reject(new Error(`agent exited ${code} before ${heldAt}s; stderr tail:\n${a.stderr().slice(-1500)}`))),
    ]);
    const rssHeld = rssOf(pid),
      agentFds = fdsOf(pid),
      targetFds = fdsOf(target.p.child.pid!);
    const agentNofile = nofileOf(pid),
      targetNofile = nofileOf(target.p.child.pid!);
    const heldActive = Number(/conns (\d+)/.exec(line)![1]);
    const exit = await a.exited;
    const peakActive = Math.max(0, ...[...a.stderr().matchAll(/^\s*\d+s\s+conns (\d+)/gm)].map((m) => Number(m[1])));
    const s = JSON.parse(a.stdout()) as {
      messages: { sent: number; received: number; lost: number };
      latency: { p50: number | null; p99: number | null };
      connect: { opened: number; failed: number };
      errors: Record<string, number>;
    };
    const row: Row = {
      run,
      requested: CONNS,
      opened: s.connect.opened,
      failed: s.connect.failed,
      peakActive,
      heldActive,
      rssBefore,
      rssHeld,
      bytesPerConn: (rssHeld - rssBefore) / Math.max(1, heldActive),
      p50: s.latency.p50,
      p99: s.latency.p99,
      sent: s.messages.sent,
      received: s.messages.received,
      lost: s.messages.lost,
      errors: s.errors,
      agentFds,
      targetFds,
      agentNofile,
      targetNofile,
      exit,
    };
    rows.push(row);
    console.error(
      `run ${run}: ${row.opened}/${CONNS} opened, ${row.failed} failed, peak ${peakActive} active (${heldActive} at ${heldAt}s), ` +
        `agent RSS ${(rssBefore / 2 ** 20).toFixed(0)} -> ${(rssHeld / 2 ** 20).toFixed(0)} MiB = ${(row.bytesPerConn / 1024).toFixed(1)} KB/connection, ` +
        `p50 ${row.p50} ms p99 ${row.p99} ms, sent ${row.sent} received ${row.received} lost ${row.lost}, errors ${JSON.stringify(row.errors)}, ` +
        `fds agent ${agentFds}/${agentNofile} target ${targetFds}/${targetNofile}, exit ${exit}`,
    );
    if (exit !== 0)
      console.error(
        a
          .stderr()
          .split("\n")
          .filter((l) => !/^\s*\d+s\s+conns/.test(l))
          .slice(-5)
          .join("\n"),
      );
  } finally {
    target.p.kill();
    await target.p.exited;
  }
}

const med = (f: (r: Row) => number) => median(rows.map(f));
console.log(
  JSON.stringify(
    {
      runs: RUNS,
      requested: CONNS,
      sourceAddresses: SOURCES,
      connectRate: CONNECT_RATE,
      timeoutS: TIMEOUT_S,
      host: {
        kernel: readFileSync("/proc/sys/kernel/osrelease", "utf8").trim(),
        node: process.version,
        memTotal: /MemTotal:\s+(\d+ kB)/.exec(readFileSync("/proc/meminfo", "utf8"))![1],
      },
      portRange,
      opened: med((r) => r.opened),
      failed: med((r) => r.failed),
      peakActive: med((r) => r.peakActive),
      agentRssHeldMiB: med((r) => r.rssHeld) / 2 ** 20,
      kbPerConn: med((r) => r.bytesPerConn) / 1024,
      p50Ms: med((r) => r.p50 ?? NaN),
      p99Ms: med((r) => r.p99 ?? NaN),
      perRun: rows,
    },
    null,
    2,
  ),
);
