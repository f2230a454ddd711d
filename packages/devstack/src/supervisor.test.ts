import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { localServices } from "./cli/local-services";
import { loadEnv } from "./env";
import { freePort } from "./free-port";
import { startManagedProcess } from "./managed-process";
import { Supervisor, type ChildSpec } from "./supervisor";

/** A real child: a node TCP server that prints `listening <port>`, or one that exits `exitAfterMs` after that line. */
function nodeServer(name: string, opts: { exitAfterMs?: number; exitCode?: number } = {}): ChildSpec & { ports: number[] } {
  const ports: number[] = [];
  const script = `
    const srv = require("node:net").createServer((s) => s.end("${name}"));
    srv.listen(0, "127.0.0.1", () => {
      console.log("listening " + srv.address().port);
      ${opts.exitAfterMs !== undefined ? `setTimeout(() => process.exit(${opts.exitCode ?? 3}), ${opts.exitAfterMs});` : ""}
    });
    process.on("SIGTERM", () => srv.close(() => process.exit(0)));`;
  return {
    name,
    ports,
    async start() {
      const child = startManagedProcess({ name, command: process.execPath, args: ["-e", script] });
      const ready = child.waitFor(/listening \d+/, 10_000).then((line) => ports.push(Number(line.split(" ")[1])));
      return { pid: child.child.pid, exited: child.exited, ready, stop: () => child.stop(5000) };
    },
  };
}

/** What the server on `port` answers: its name, or null when nothing listens. */
function hello(port: number): Promise<string | null> {
  return new Promise((resolve) => {
    const s = net.connect(port, "127.0.0.1");
    let text = "";
    s.on("data", (d) => (text += String(d)));
    s.on("end", () => resolve(text));
    s.on("error", () => resolve(null));
  });
}

const alive = (pid: number | undefined) => {
  try {
    process.kill(pid!, 0);
    return true;
  } catch {
    return false;
  }
};

async function until<T>(what: string, probe: () => Promise<T | null | undefined> | T | null | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const running: Supervisor[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) await s.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("Supervisor (npm start)", () => {
  it("restarts a child killed with SIGKILL — an app, redis-server, the embedded PostgreSQL — and leaves the others running", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "volley-supervisor-"));
    chmodSync(dataDir, 0o755); // as root, PostgreSQL runs as the postgres user and must reach its data
    dirs.push(dataDir);
    const env = loadEnv({ VOLLEY_DATA_DIR: dataDir, VOLLEY_PG_PORT: String(await freePort()), VOLLEY_REDIS_PORT: String(await freePort()) });
    const lines: string[] = [];
    const services = localServices(env, () => {});
    expect(services.specs.map((s) => s.name)).toEqual(["postgres", "redis"]);
    const hub = nodeServer("hub");
    const agent = nodeServer("agent");
    const sup = new Supervisor([...services.specs.map((s) => [s]), [hub], [agent]], {
      log: (l) => lines.push(l),
      backoff: { initialMs: 200, maxMs: 2000 },
    });
    running.push(sup);
    await sup.start();
    const pids = Object.fromEntries(["postgres", "redis", "hub", "agent"].map((n) => [n, sup.process(n)!.pid]));

    // An app: back on a new pid, the log says why and when; nothing else was touched.
    process.kill(pids.agent!, "SIGKILL");
    await until("the agent's restart", () => lines.find((l) => l.startsWith("agent is back")));
    expect(lines).toContain("agent exited with signal SIGKILL; restarting in 0.2 s (attempt 1)");
    expect(sup.process("agent")!.pid).not.toBe(pids.agent);
    expect(await hello(agent.ports.at(-1)!)).toBe("agent");
    expect(await hello(hub.ports[0]!)).toBe("hub");
    for (const name of ["postgres", "redis", "hub"]) expect(sup.process(name)!.pid).toBe(pids[name]);

    // redis-server: noticed and restarted on its port, with the AOF it wrote (keys persist).
    const redis = new Redis(services.redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true });
    redis.on("error", () => {});
    await redis.connect();
    await redis.set("survives", "yes");
    await redis.call("BGREWRITEAOF");
    await until("the AOF rewrite", async () => !String(await redis.info("persistence")).includes("aof_rewrite_in_progress:1"));
    redis.disconnect();
    process.kill(pids.redis!, "SIGKILL");
    await until("redis's restart", () => lines.find((l) => l.startsWith("redis is back")));
    expect(lines).toContain("redis exited with signal SIGKILL; restarting in 0.2 s (attempt 1)");
    const redis2 = new Redis(services.redisUrl, { maxRetriesPerRequest: 1 });
    expect(await redis2.get("survives")).toBe("yes");
    redis2.disconnect();

    // PostgreSQL: the same, with its data directory.
    const db = new pg.Client({ connectionString: services.databaseUrl });
    await db.connect();
    await db.query("create table kept (v text); insert into kept values ('yes')");
    await db.end();
    process.kill(pids.postgres!, "SIGKILL");
    await until("postgres's restart", () => lines.find((l) => l.startsWith("postgres is back")), 60_000);
    expect(lines.some((l) => /^postgres exited with signal SIGKILL; restarting in [\d.]+ s \(attempt \d\)$/.test(l))).toBe(true);
    const db2 = new pg.Client({ connectionString: services.databaseUrl });
    await db2.connect();
    expect((await db2.query("select v from kept")).rows).toEqual([{ v: "yes" }]);
    await db2.end();

    expect(sup.process("hub")!.pid).toBe(pids.hub);
    expect(await hello(hub.ports[0]!)).toBe("hub");
    expect(hub.ports).toHaveLength(1);

    // Ctrl-C / SIGTERM: everything stops, exit code 0.
    const last = ["postgres", "redis", "hub", "agent"].map((n) => sup.process(n)!.pid);
    expect(await sup.stop()).toEqual({ code: 0, reason: "stopped" });
    for (const pid of last) expect(alive(pid)).toBe(false);
  }, 120_000);

  it("stops everything with a non-zero result naming the child when one crash-loops", async () => {
    const lines: string[] = [];
    const steady = nodeServer("targets");
    const flaky = nodeServer("agent", { exitAfterMs: 100, exitCode: 3 });
    const sup = new Supervisor([[steady], [flaky]], {
      log: (l) => lines.push(l),
      backoff: { initialMs: 50, maxMs: 400 },
      crashLoop: { crashes: 5, windowMs: 60_000 },
    });
    running.push(sup);
    await sup.start();
    const steadyPid = sup.process("targets")!.pid;

    const result = await Promise.race([sup.done, new Promise((r) => setTimeout(() => r("still running"), 30_000))]);
    expect(result).toEqual({
      code: 1,
      reason:
        "agent exited with code 3 and crashed 5 times within 60 s; restarting it again will not help, so everything was stopped (see agent's output above)",
    });
    expect(lines.filter((l) => l.startsWith("agent exited with code 3; restarting"))).toEqual([
      "agent exited with code 3; restarting in 0.05 s (attempt 1)",
      "agent exited with code 3; restarting in 0.1 s (attempt 2)",
      "agent exited with code 3; restarting in 0.2 s (attempt 3)",
      "agent exited with code 3; restarting in 0.4 s (attempt 4)",
    ]);
    expect(flaky.ports).toHaveLength(5);
    expect(alive(steadyPid)).toBe(false);
    expect(await hello(steady.ports[0]!)).toBeNull();
  }, 60_000);

  it("does not restart a child that fails its first start: start() rejects and the rest is stopped", async () => {
    const steady = nodeServer("targets");
    const broken: ChildSpec = {
      name: "hub",
      async start() {
        const child = startManagedProcess({ name: "hub", command: process.execPath, args: ["-e", "console.error('EADDRINUSE'); process.exit(1)"] });
        return { pid: child.child.pid, exited: child.exited, ready: child.waitFor(/listening/, 10_000), stop: () => child.stop(5000) };
      },
    };
    const lines: string[] = [];
    const sup = new Supervisor([[steady], [broken]], { log: (l) => lines.push(l), backoff: { initialMs: 50, maxMs: 50 } });
    running.push(sup);
    await expect(sup.start()).rejects.toThrow(/hub exited \(1\) before printing/);
    expect((await sup.done).code).toBe(1);
    expect(await hello(steady.ports[0]!)).toBeNull();
    expect(lines).toEqual([]);
  });

  it("Ctrl-C while starting: start() resolves false and nothing started is left running", async () => {
    const first = nodeServer("targets");
    const slow: ChildSpec = {
      name: "web",
      async start() {
        const child = startManagedProcess({
          name: "web",
          command: process.execPath,
          args: ["-e", "setTimeout(() => console.log('ready'), 30000); process.on('SIGTERM', () => process.exit(0))"],
        });
        return { pid: child.child.pid, exited: child.exited, ready: child.waitFor(/ready/, 60_000), stop: () => child.stop(5000) };
      },
    };
    const sup = new Supervisor([[first], [slow]], { log: () => {} });
    running.push(sup);
    const starting = sup.start();
    await until("web to be spawned", () => sup.process("web"));
    const webPid = sup.process("web")!.pid;
    expect(await sup.stop()).toEqual({ code: 0, reason: "stopped" });
    expect(await starting).toBe(false);
    expect(alive(webPid)).toBe(false);
    expect(await hello(first.ports[0]!)).toBeNull();
  });
});
