/**
 * Chaos soak: the whole `npm start` stack (embedded PostgreSQL, Redis, targets, hub, one agent,
 * web) on its default ports with a fresh data directory. For `--minutes` (30) small runs start
 * continuously through the REST API with an API token — a ws echo (20 connections × 20 msg/s for
 * 10 s) and a groups plan (20 members in groups of 4, 2 msg/s each, 10 s), two in flight at a time
 * — while every `--every` (2m) one random part (agent, hub, web, Redis, PostgreSQL) is killed
 * (SIGKILL) or frozen (SIGSTOP for 5–20 s, then SIGCONT); npm start's supervisor restarts what was
 * killed. Afterwards, from the stack's PostgreSQL and API:
 *   - every run is final, and every run that did not pass has a reason and a fault within its
 *     lifetime (a reason naming a lost agent without an agent or hub fault is listed as suspect);
 *   - no acknowledged frame is missing: each shard's frame count in its shard.end (the agent sends
 *     it after its last frame was acked) against the run_intervals rows stored for seq 0..count−1;
 *   - no agent is wedged: a fresh ws echo run passes within 3 minutes;
 *   - the stack still serves: GET /api/v1/runs answers 200.
 * Agent abuse (issue 31; `--abuse-every`, 3m, 0 = none): a second account's org ("org B", its own
 * join token) runs one bounded episode of bench/lib/chaos-abuse.ts every period, half a period
 * after the faults — decompression-bomb and maximal frames for a shard of B's own run, frames and
 * shard ends that fit no schema, one token opening 300 agent sockets, 200 wrong-token handshakes —
 * through web's /hub relay, as a remote agent would. Abuse never explains one of org A's runs not
 * passing (only the kills and freezes do), no bomb frame may be acknowledged, no wrong token
 * welcomed, B's runs end with a reason, and B's agent rows stay within the hub's per-token cap.
 * Prints a JSON result on stdout (progress on stderr); exit code 1 when a check found a violation.
 * The stack is always stopped (signals, errors and exit included) and the data directory removed;
 * its log is kept (path printed).
 *
 * Usage: node --import tsx bench/chaos-soak.ts [--minutes 30] [--every 2m] [--abuse-every 3m] [--seed 1]
 */
import { mkdtempSync } from "node:fs";
import { cpus, hostname, tmpdir, totalmem } from "node:os";
import path from "node:path";
import { planSchema } from "@volley/contracts";
import { DEFAULT_ORG_ID } from "@volley/db";
import { ABUSE_KINDS, abuse, type AbuseEpisode, type AbuseTarget } from "./lib/chaos-abuse";
import { checkAbuse, checkStore, type Fault } from "./lib/chaos-checks";
import { ChaosStack, PORTS, VICTIMS, type Victim } from "./lib/chaos-stack";

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}
function durationArg(name: string, fallback: string): number {
  const v = arg(name, fallback);
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(v);
  if (!m) throw new Error(`--${name} ${v}: give a duration like 2m, 90s or 500ms`);
  return Number(m[1]) * ({ ms: 1, s: 1000, m: 60_000 } as const)[(m[2] ?? "s") as "ms" | "s" | "m"];
}

const MINUTES = Number(arg("minutes", "30"));
const EVERY_MS = durationArg("every", "2m");
const ABUSE_EVERY_MS = durationArg("abuse-every", "3m");
const SEED = Number(arg("seed", String(Date.now() % 100_000)));
if (!(MINUTES > 0) || EVERY_MS < 10_000) throw new Error("--minutes must be positive and --every at least 10s");
if (ABUSE_EVERY_MS !== 0 && ABUSE_EVERY_MS < 30_000) throw new Error("--abuse-every must be 0 (no abuse) or at least 30s");
const IN_FLIGHT = 2;
const WEB = `http://localhost:${PORTS.web}`;
const DATABASE_URL = `postgres://postgres:volley@127.0.0.1:${PORTS.postgres}/volley`;

const ECHO = planSchema.parse({
  name: "chaos ws echo",
  target: { url: "ws://127.0.0.1:9001/echo", protocol: "ws" },
  connections: { count: 20, rate: 20 },
  scenario: { kind: "echo", message: { bytes: 64, rate: 20, per: "connection", timeout: "5s" }, duration: "10s" },
  agents: { pool: "default", count: 1 },
});
const GROUPS = planSchema.parse({
  name: "chaos groups",
  target: { url: "ws://127.0.0.1:9001/group", protocol: "ws" },
  connections: { count: 20, rate: 20 },
  scenario: { kind: "groups", size: 4, message: { bytes: 64, rate: 2, per: "connection", timeout: "5s" }, duration: "10s" },
  agents: { pool: "default", count: 1 },
});
const PLANS = [ECHO, GROUPS];
/** Messages each plan sends when nothing goes wrong: count × rate × duration. */
const PLANNED_SENT = { [ECHO.name]: 20 * 20 * 10, [GROUPS.name]: 20 * 2 * 10 };

/** mulberry32: a seeded schedule, so a soak can be rerun with the same faults (--seed). */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = prng(SEED);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const clock = () => new Date().toISOString().slice(11, 19);
const say = (line: string) => process.stderr.write(`${clock()} ${line}\n`);

// biome-ignore lint/suspicious/noExplicitAny: the soak reads whichever field of whichever endpoint's answer it checks.
type Reply = { status: number; body: any } | { status: 0; error: string };
async function http(
  method: string,
  url: string,
  opts: { token?: string; cookie?: string; body?: unknown; timeoutMs?: number } = {},
): Promise<Reply & { headers?: Headers }> {
  const headers: Record<string, string> = { origin: WEB };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.cookie) headers.cookie = opts.cookie;
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  try {
    const res = await fetch(`${WEB}${url}`, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: AbortSignal.timeout(opts.timeoutMs ?? 10_000),
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON (an HTML error page)
    }
    return { status: res.status, body, headers: res.headers };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    return { status: 0, error: e.cause?.code ?? e.name ?? String(err) };
  }
}

/** Signs an account up; its session cookie. The first account owns the install's default org (org A), later ones an org each. */
async function signUp(email: string, name: string): Promise<string> {
  const signUp = await http("POST", "/api/auth/sign-up/email", { body: { email, password: "correct horse battery staple", name } });
  const cookie = signUp.headers
    ?.getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
  if (signUp.status !== 200 || !cookie) throw new Error(`sign-up answered ${signUp.status}: ${JSON.stringify("body" in signUp ? signUp.body : signUp.error)}`);
  return cookie;
}

/** Org B: a second account, its own org, and two join tokens for agents in its pool `abuse` (one for the flood alone). */
async function abuser(): Promise<AbuseTarget> {
  const cookie = await signUp("abuser@example.com", "Abuser");
  const token = async (name: string) => {
    const created = await http("POST", "/api/v1/agent-tokens", { cookie, body: { name, pool: "abuse" } });
    if (created.status !== 201 || !("body" in created) || typeof created.body?.secret !== "string")
      throw new Error(`POST /api/v1/agent-tokens (org B) answered ${created.status}`);
    return created.body.secret as string;
  };
  return { web: WEB, joinToken: await token("abuse"), floodToken: await token("flood"), cookie };
}

async function apiToken(): Promise<string> {
  const cookie = await signUp("chaos@example.com", "Chaos");
  const created = await http("POST", "/api/v1/tokens", { cookie, body: { name: "chaos-soak", scopes: ["read", "run"] } });
  if (created.status !== 201 || !("body" in created) || typeof created.body?.secret !== "string")
    throw new Error(`POST /api/v1/tokens answered ${created.status}`);
  return created.body.secret;
}

const FINAL = new Set(["passed", "failed", "errored", "aborted", "degraded", "inconclusive"]);
interface Tracked {
  id: string;
  plan: string;
  submittedAt: number;
  status: string;
}

async function main() {
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const dataDir = mkdtempSync(path.join(tmpdir(), "volley-chaos-"));
  const stack = new ChaosStack(dataDir, path.join(tmpdir(), `volley-chaos-${stamp}.log`));
  let stopping: Promise<void> | null = null;
  const stopStack = () =>
    (stopping ??= (async () => {
      say("stopping the stack…");
      const killed = await stack.stop();
      if (killed.length > 0) say(`killed what was left: ${killed.join("; ")}`);
      stack.removeData();
    })());
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(sig, () => {
      say(`${sig}: stopping`);
      void stopStack().finally(() => process.exit(130));
    });
  }
  process.on("exit", () => {
    if (!stopping) stack.killLeftovers();
  });

  try {
    say(`seed ${SEED}; starting npm start (data in ${dataDir}, log ${stack.logFile})…`);
    const t0 = Date.now();
    await stack.start();
    say(`stack up in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    const token = await apiToken();
    const target = ABUSE_EVERY_MS > 0 ? await abuser() : null;
    const result = await soak(stack, token, target);
    console.log(JSON.stringify({ seed: SEED, log: stack.logFile, ...result }, null, 2));
    await stopStack();
    const left = stack.killLeftovers();
    if (left.length > 0) say(`after stop, still found: ${left.join("; ")}`);
    process.exitCode = result.violations.length > 0 ? 1 : 0;
  } catch (err) {
    say(`failed: ${err instanceof Error ? err.stack : String(err)}`);
    await stopStack();
    process.exitCode = 2;
  }
}

async function soak(stack: ChaosStack, token: string, abuseTarget: AbuseTarget | null) {
  const since = Date.now() - 1000;
  const end = since + MINUTES * 60_000;
  const runs = new Map<string, Tracked>();
  const submissions: Record<string, number> = {};
  const faults: Fault[] = [];
  let stackDied: string | null = null;
  void stack.exit.then((code) => (stackDied ??= `npm start exited (code ${code}) during the soak; see the log`));
  let planIndex = 0;

  const submitter = (async () => {
    while (Date.now() < end && !stackDied) {
      for (const run of runs.values()) {
        if (FINAL.has(run.status)) continue;
        const r = await http("GET", `/api/v1/runs/${run.id}`, { token, timeoutMs: 5000 });
        if (r.status === 200 && "body" in r) run.status = r.body.status;
      }
      // A run stuck for 5 minutes no longer holds a slot (it is reported after the soak).
      const inFlight = [...runs.values()].filter((r) => !FINAL.has(r.status) && Date.now() - r.submittedAt < 300_000).length;
      if (inFlight < IN_FLIGHT) {
        const plan = PLANS[planIndex % PLANS.length]!;
        const r = await http("POST", "/api/v1/runs", { token, body: { plan } });
        const key =
          "error" in r ? `network: ${r.error}` : r.status === 201 ? "201 created" : `${r.status} ${"body" in r ? (r.body?.error?.code ?? "") : ""}`.trim();
        submissions[key] = (submissions[key] ?? 0) + 1;
        if (r.status === 201 && "body" in r) {
          runs.set(r.body.id, { id: r.body.id, plan: plan.name, submittedAt: Date.now(), status: "queued" });
          planIndex++;
        }
      }
      await sleep(1000);
    }
  })();

  const injector = (async () => {
    for (let next = since + EVERY_MS; next < end && !stackDied; next += EVERY_MS) {
      await sleep(Math.max(0, next - Date.now()));
      if (stackDied) break;
      // A part still restarting from the last fault has no process: pick again.
      let victim: Victim | null = null;
      let pids: number[] = [];
      for (let tries = 0; tries < 10 && pids.length === 0; tries++) {
        victim = VICTIMS[Math.floor(random() * VICTIMS.length)]!;
        pids = stack.pids(victim);
        if (pids.length === 0) await sleep(2000);
      }
      if (!victim || pids.length === 0) {
        say("no process to hit this round");
        continue;
      }
      const kind = random() < 0.5 ? "kill" : "freeze";
      const ms = kind === "freeze" ? Math.round(5000 + random() * 15_000) : 0;
      const fault: Fault = { at: Date.now(), victim, kind, pids, ms };
      faults.push(fault);
      if (kind === "kill") {
        say(`fault: SIGKILL ${victim} (pids ${pids.join(" ")})`);
        stack.kill(pids);
      } else {
        say(`fault: SIGSTOP ${victim} for ${(ms / 1000).toFixed(1)} s (pids ${pids.join(" ")})`);
        stack.freeze(pids);
        await sleep(ms);
        stack.thaw(pids);
        say(`SIGCONT ${victim}`);
      }
    }
  })();

  const episodes: AbuseEpisode[] = [];
  const abuser = (async () => {
    if (!abuseTarget) return;
    // Half a period after the faults' schedule, the kinds in turn, so every kind runs in a 12-minute soak.
    for (let next = since + ABUSE_EVERY_MS / 2, k = 0; next < end - 30_000 && !stackDied; next += ABUSE_EVERY_MS, k++) {
      await sleep(Math.max(0, next - Date.now()));
      if (stackDied) break;
      const kind = ABUSE_KINDS[k % ABUSE_KINDS.length]!;
      say(`abuse: ${kind} from org B`);
      const episode = await abuse(kind, abuseTarget);
      episodes.push(episode);
      say(`abuse: ${kind} done in ${(episode.ms / 1000).toFixed(0)} s: ${JSON.stringify(episode.outcome)}`);
    }
  })();

  const progress = setInterval(() => {
    const statuses: Record<string, number> = {};
    for (const r of runs.values()) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    say(`runs ${JSON.stringify(statuses)}; submissions ${JSON.stringify(submissions)}`);
  }, 60_000);
  await Promise.all([submitter, injector, abuser]);
  clearInterval(progress);
  const soakSeconds = Math.round((Date.now() - since) / 1000);
  say(`soak over after ${soakSeconds} s; waiting for every run to end…`);

  // Let the stack settle (a part killed by the last fault restarts), then wait for open runs.
  const settleDeadline = Date.now() + 360_000;
  for (;;) {
    const open = [...runs.values()].filter((r) => !FINAL.has(r.status));
    if (open.length === 0 || Date.now() > settleDeadline || stackDied) break;
    for (const run of open) {
      const r = await http("GET", `/api/v1/runs/${run.id}`, { token, timeoutMs: 5000 });
      if (r.status === 200 && "body" in r) run.status = r.body.status;
    }
    await sleep(2000);
  }

  const violations: { kind: string; runId?: string; shardId?: string; detail: string }[] = [];
  if (stackDied) violations.push({ kind: "stack stopped", detail: stackDied });

  // No agent wedged: a fresh run passes within a bound.
  const fresh: { id: string | null; status: string; seconds: number } = { id: null, status: "not started", seconds: 0 };
  if (!stackDied) {
    const t = Date.now();
    while (Date.now() - t < 180_000) {
      const r = await http("POST", "/api/v1/runs", { token, body: { plan: ECHO } });
      if (r.status === 201 && "body" in r) {
        fresh.id = r.body.id;
        break;
      }
      await sleep(2000);
    }
    while (fresh.id && Date.now() - t < 180_000) {
      const r = await http("GET", `/api/v1/runs/${fresh.id}`, { token, timeoutMs: 5000 });
      if (r.status === 200 && "body" in r) fresh.status = r.body.status;
      if (FINAL.has(fresh.status)) break;
      await sleep(1000);
    }
    fresh.seconds = Math.round((Date.now() - t) / 1000);
    if (fresh.status !== "passed")
      violations.push({
        kind: "agent wedged",
        runId: fresh.id ?? undefined,
        detail: `a fresh ws echo run after the soak is ${fresh.status} after ${fresh.seconds} s (bound 180 s)`,
      });
  }
  const list = await http("GET", "/api/v1/runs?limit=5", { token });
  if (list.status !== 200)
    violations.push({
      kind: "not serving",
      detail: `GET /api/v1/runs answered ${list.status}${list.status === 0 ? ` (${"error" in list ? list.error : ""})` : ""}`,
    });

  // Org A's runs only: org B's are judged by the abuse checks (abuse never explains one of A's).
  const checks = await checkStore(DATABASE_URL, since, faults, PLANNED_SENT, DEFAULT_ORG_ID).catch((err: unknown) => {
    violations.push({ kind: "store unreadable", detail: String(err) });
    return null;
  });
  const abuseChecks = abuseTarget
    ? await checkAbuse(DATABASE_URL, since, DEFAULT_ORG_ID, episodes).catch((err: unknown) => {
        violations.push({ kind: "store unreadable", detail: `abuse checks: ${String(err)}` });
        return null;
      })
    : null;
  const log = stack.log();
  const restarts: Record<string, number> = {};
  for (const m of log.matchAll(/\[volley\]\S* (\w+) (?:exited|failed to start)[^;]*; restarting/g)) restarts[m[1]!] = (restarts[m[1]!] ?? 0) + 1;
  const faultCount: Record<string, number> = {};
  for (const f of faults) faultCount[`${f.kind} ${f.victim}`] = (faultCount[`${f.kind} ${f.victim}`] ?? 0) + 1;

  return {
    date: new Date().toISOString(),
    machine: `${hostname()}, ${cpus().length} × ${cpus()[0]?.model ?? "?"}, ${Math.round(totalmem() / 2 ** 30)} GiB`,
    minutes: MINUTES,
    soakSeconds,
    everySeconds: EVERY_MS / 1000,
    /** Runs created during the soak (the fresh run after it not counted; byStatus and byReason include it). */
    runsStarted: checks ? checks.runs.filter((r) => r.id !== fresh.id).length : runs.size,
    submissions,
    byStatus: checks?.byStatus ?? {},
    byReason: checks?.byReason ?? {},
    faults: faultCount,
    faultLog: faults.map((f) => ({ at: new Date(f.at).toISOString(), victim: f.victim, kind: f.kind, freezeSeconds: f.ms / 1000, pids: f.pids.length })),
    supervisorRestarts: restarts,
    frames: checks && {
      shardsChecked: checks.shardsChecked,
      reported: checks.framesReported,
      stored: checks.framesStored,
      shardsWithFramesButNoEnd: checks.shardsWithoutEnd,
    },
    freshRun: fresh,
    listStatus: list.status,
    abuse: abuseChecks && { episodes, orgB: abuseChecks.orgB },
    violations: [...violations, ...(checks?.violations ?? []), ...(abuseChecks?.violations ?? [])],
    suspects: checks?.suspects ?? [],
  };
}

await main();
