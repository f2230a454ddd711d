/**
 * Start and floor (issue 29): what Volley's own processes cost before any load.
 *   - `volley --version`, `volley validate examples/ws-echo.yaml`, `volley-agent --version`: wall
 *     and CPU seconds, compiled (dist/, `npm run setup`) and through tsx from source;
 *   - a standalone `volley-agent run` of a plan that does almost nothing (1 connection, 1 message,
 *     1 s against a local ws echo): its whole CPU is the cost outside the run itself;
 *   - the agent daemon idle and connected to a hub (a real hub on a fresh database): its resident
 *     memory 5 s after it joined.
 * Medians of `runs` (5). Needs the bins built: `npm run build -w @volley/cli -w @volley/agent`.
 * `daemon` measures the idle daemon alone (3 agents, each 5 s after joining), optionally of another
 * build's agent bundle (an older checkout's, to compare).
 *
 *   node --import tsx bench/start-floor.ts [runs=5] [all|daemon] [agent bundle]
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { createTestDatabase } from "@volley/db";
import { freePort, leaseRedisDb, startApp, startTestServices } from "@volley/devstack";
import { REPO, median, startTarget } from "./lib/spawn-pinned";

const RUNS = Math.max(1, Math.min(15, Number(process.argv[2] ?? 5)));
const WHAT = process.argv[3] ?? "all";
if (!["all", "daemon"].includes(WHAT)) throw new Error(`second argument must be all or daemon (got ${WHAT})`);
const CLI_BUNDLE = path.join(REPO, "apps/cli/dist/volley.mjs");
const AGENT_BUNDLE = path.resolve(process.argv[4] ?? path.join(REPO, "apps/agent/dist/volley-agent.mjs"));
for (const f of WHAT === "all" ? [CLI_BUNDLE, AGENT_BUNDLE] : [AGENT_BUNDLE])
  if (!existsSync(f)) throw new Error(`${f} is missing: run npm run build -w @volley/cli -w @volley/agent`);

interface Cost {
  wall: number;
  cpu: number;
  rssMb: number;
}

/** One process under GNU time: wall s, user+system CPU s, max RSS MB. */
function timed(args: string[], env: NodeJS.ProcessEnv = process.env): Cost {
  const r = spawnSync("/usr/bin/time", ["-f", "%e %U %S %M", process.execPath, ...args], { cwd: REPO, env, encoding: "utf8" });
  const line = r.stderr.trim().split("\n").pop() ?? "";
  const [wall, user, sys, kb] = line.split(" ").map(Number);
  if (r.status !== 0 && r.status !== 1) throw new Error(`${args.join(" ")} exited ${r.status}: ${r.stderr.slice(-400)}`);
  return { wall: wall!, cpu: user! + sys!, rssMb: kb! / 1024 };
}

function medianOf(args: string[], env?: NodeJS.ProcessEnv): Cost {
  const xs = Array.from({ length: RUNS }, () => timed(args, env));
  return { wall: median(xs.map((x) => x.wall)), cpu: median(xs.map((x) => x.cpu)), rssMb: median(xs.map((x) => x.rssMb)) };
}

const fmt = (c: Cost) => `${c.wall.toFixed(2)} s wall, ${c.cpu.toFixed(2)} CPU-s, ${c.rssMb.toFixed(0)} MB max RSS`;
const rows: [string, string][] = [];
const row = (what: string, c: Cost) => {
  rows.push([what, fmt(c)]);
  process.stderr.write(`${what}: ${fmt(c)}\n`);
};

process.stderr.write(
  `load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}; ${RUNS} runs each\n`,
);
const dir = mkdtempSync(path.join(tmpdir(), "volley-floor-"));
if (WHAT === "all") {
  row("volley --version (bin)", medianOf(["apps/cli/bin/volley.js", "--version"]));
  row("volley validate, compiled", medianOf([CLI_BUNDLE, "validate", "examples/ws-echo.yaml"]));
  row("volley validate, tsx from source", medianOf(["--import", "tsx", "apps/cli/src/main.ts", "validate", "examples/ws-echo.yaml"]));
  row("volley-agent --version (bin)", medianOf(["apps/agent/bin/volley-agent.js", "--version"]));
  row("volley-agent --help, compiled", medianOf([AGENT_BUNDLE, "--help"]));

  // A run that does almost nothing: what the agent costs around a run (start, threads, summary).
  const target = await startTarget();
  const plan = path.join(dir, "tiny.yaml");
  writeFileSync(
    plan,
    `name: floor\ntarget: { url: "${target.url}", protocol: ws }\nconnections: { count: 1, rate: 10 }\nscenario: { kind: echo, message: { bytes: 32, rate: 1 }, duration: 1s }\nagents: { pool: default, count: 1 }\n`,
  );
  row("volley-agent run (1 conn, 1 msg, 1 s), compiled, 1 engine thread", medianOf([AGENT_BUNDLE, "run", plan, "--workers", "1"]));
  row("volley-agent run (same), compiled, main thread", medianOf([AGENT_BUNDLE, "run", plan, "--workers", "0"]));
  row("volley-agent run (same), tsx from source, 1 engine thread", medianOf(["--import", "tsx", "apps/agent/src/main.ts", "run", plan, "--workers", "1"]));
  await target.stop();
}

// The daemon idle and connected: a real hub on a fresh database and a leased Redis database.
const services = await startTestServices();
const db = await createTestDatabase(services.databaseServerUrl);
const redis = await leaseRedisDb(services.redisUrl);
const hubPort = await freePort();
const token = "start-floor-agent-token";
const hub = startApp("hub", { ...process.env, DATABASE_URL: db.url, REDIS_URL: redis.url, HUB_PORT: String(hubPort), AGENT_TOKEN: token, LOG_LEVEL: "info" });
try {
  await hub.waitFor(/hub listening on/, 60_000);
  const rss: number[] = [];
  for (let i = 0; i < Math.min(RUNS, 3); i++) {
    const agent = spawn(process.execPath, [AGENT_BUNDLE], {
      cwd: REPO,
      env: {
        ...process.env,
        HUB_URL: `http://127.0.0.1:${hubPort}`,
        AGENT_TOKEN: token,
        AGENT_NAME: `floor-${i}`,
        AGENT_STATE_DIR: mkdtempSync(path.join(dir, "state-")),
        LOG_LEVEL: "info",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    const joined = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`agent did not connect in 60 s: ${out.slice(-400)}`)), 60_000);
      const onData = (d: Buffer) => {
        out += d.toString();
        if (/connected to/.test(out)) {
          clearTimeout(timer);
          resolve();
        }
      };
      agent.stdout.on("data", onData);
      agent.stderr.on("data", onData);
    });
    await joined;
    await new Promise((r) => setTimeout(r, 5000));
    rss.push(Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${agent.pid}/status`, "utf8"))![1]) / 1024);
    agent.kill("SIGTERM");
    await new Promise((r) => agent.once("exit", r));
  }
  rows.push([
    "volley-agent daemon, idle and connected to a hub, 5 s after joining, compiled",
    `${median(rss).toFixed(0)} MB RSS (runs: ${rss.map((r) => r.toFixed(0)).join(", ")})`,
  ]);
  process.stderr.write(`${rows.at(-1)!.join(": ")}\n`);
} finally {
  await hub.stop(5000);
  await db.drop().catch(() => {});
  await redis.release().catch(() => {});
  await services.stop();
}

console.log(`| what | median of ${RUNS} |\n| --- | --- |\n${rows.map(([a, b]) => `| ${a} | ${b} |`).join("\n")}`);
