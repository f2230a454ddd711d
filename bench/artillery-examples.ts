/**
 * Artillery's own example scripts (packages/plan-import/fixtures/artillery/examples: websockets,
 * socket-io, http-socketio-server, unchanged but for config.target and a shorter phase), each run
 * by Artillery 2.0.34 and, imported by `volley import artillery`, by `volley-agent run`, against a
 * fresh copy of the server the example was written for (bench/lib/artillery-example-apps.ts). The
 * servers' own counts are compared: what each tool made the app do per user.
 *
 *   node --import tsx bench/artillery-examples.ts [seconds=10] [runs=1]
 *
 * Artillery and its Node 22 are installed into bench/.tools/ on first use (bench/lib/artillery.ts).
 * Both tools run on core 1; the servers run in this process.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { importArtillery } from "@volley/plan-import";
import { startHttpSocketioExample, startSocketioExample, startWsEchoExample, WS_EXAMPLE_PROCESSOR, type ExampleApp } from "./lib/artillery-example-apps";
import { counter, runArtillery } from "./lib/artillery-run";
import { AGENT_BIN, REPO, spawnPinned } from "./lib/spawn-pinned";

const SECONDS = Math.max(2, Math.min(60, Number(process.argv[2] ?? 10)));
const RUNS = Math.max(1, Math.min(5, Number(process.argv[3] ?? 1)));
const EXAMPLES = path.join(REPO, "packages/plan-import/fixtures/artillery/examples");

interface Example {
  file: string;
  start: () => Promise<ExampleApp>;
  processor?: { file: string; source: string };
}
const EXAMPLE_LIST: Example[] = [
  { file: "websockets-test.yml", start: startWsEchoExample, processor: { file: "my-functions.js", source: WS_EXAMPLE_PROCESSOR } },
  { file: "socket-io.yml", start: startSocketioExample },
  { file: "http-socket.yml", start: startHttpSocketioExample },
];

/** The script as its authors wrote it, pointed at `url` and its one phase shortened to SECONDS. */
function localScript(file: string, url: string): string {
  const text = readFileSync(path.join(EXAMPLES, file), "utf8");
  const out = text.replace(/^(\s*target:\s*).*$/m, `$1"${url}"`).replace(/^(\s*- duration:\s*)\d+/m, `$1${SECONDS}`);
  if (out === text) throw new Error(`${file}: config.target or the phase's duration not found`);
  return out;
}

interface AgentSummary {
  messages: { sent: number; received: number; lost: number };
  users?: { started: number; completed: number; failed: number; dropped: number; steps: { step: string; count: number; failed: number }[] };
}

async function runVolley(script: string): Promise<{ summary: AgentSummary; notes: string[] }> {
  const { plan, notes } = importArtillery(script, {});
  const dir = mkdtempSync(path.join(tmpdir(), "volley-bench-examples-"));
  const planFile = path.join(dir, "plan.json");
  writeFileSync(planFile, JSON.stringify(plan));
  const a = spawnPinned(1, [process.execPath, AGENT_BIN, "run", planFile, "--json"], { limitMs: (SECONDS + 60) * 1000 });
  const code = await a.exited;
  // A threshold or a failed step may make it exit non-zero; the summary is still printed.
  if (a.stdout().trim() === "") throw new Error(`agent exited ${code} without a summary: ${a.stderr().slice(-800)}`);
  return { summary: JSON.parse(a.stdout()) as AgentSummary, notes };
}

const fmt = (c: Record<string, number>) =>
  Object.entries(c)
    .sort()
    .map(([k, v]) => `${k} ${v}`)
    .join(", ");

const lines: string[] = [];
const say = (s: string) => {
  lines.push(s);
  console.log(s);
};
say(`# Artillery examples, ${SECONDS} s phase, ${RUNS} run(s) each (${new Date().toISOString()})`);
for (const ex of EXAMPLE_LIST) {
  for (let run = 1; run <= RUNS; run++) {
    const app = await ex.start();
    try {
      const script = localScript(ex.file, app.url);
      const art = await runArtillery(script, { ...(ex.processor ? { processor: ex.processor } : {}), limitMs: (SECONDS + 90) * 1000 });
      const byArtillery = app.counts();
      app.reset();
      const { summary, notes } = await runVolley(script);
      const byVolley = app.counts();
      const vusers = counter(art, "vusers.created");
      say(`\n## ${ex.file}, run ${run}`);
      say(
        `- Artillery: vusers created ${vusers}, completed ${counter(art, "vusers.completed")}, failed ${counter(art, "vusers.failed")}; exit ${art.exitCode}`,
      );
      say(`  server saw: ${fmt(byArtillery)}`);
      const u = summary.users;
      say(
        `- Volley (imported): users started ${u?.started ?? "-"}, completed ${u?.completed ?? "-"}, failed ${u?.failed ?? "-"}, dropped ${u?.dropped ?? "-"}; messages sent ${summary.messages.sent}, received ${summary.messages.received}, lost ${summary.messages.lost}`,
      );
      say(`  server saw: ${fmt(byVolley)}`);
      const keys = [...new Set([...Object.keys(byArtillery), ...Object.keys(byVolley)])].sort();
      const perUser = (c: Record<string, number>, k: string, users: number) => (users > 0 ? ((c[k] ?? 0) / users).toFixed(3) : "-");
      say(
        `  per user (Artillery / Volley): ${keys.map((k) => `${k} ${perUser(byArtillery, k, vusers)} / ${perUser(byVolley, k, u?.started ?? 0)}`).join("; ")}`,
      );
      const errors = Object.entries(art.aggregate.counters).filter(([k]) => k.startsWith("errors."));
      if (errors.length > 0) say(`  Artillery errors: ${errors.map(([k, v]) => `${k} ${v}`).join(", ")}`);
      const failedSteps = (u?.steps ?? []).filter((s) => s.failed > 0);
      if (failedSteps.length > 0) say(`  Volley failed steps: ${failedSteps.map((s) => `${s.step} ${s.failed} of ${s.count}`).join(", ")}`);
      say(`  import notes: ${notes.length === 0 ? "none" : notes.map((n) => `"${n}"`).join(" ")}`);
    } finally {
      await app.close();
    }
  }
}
writeFileSync(path.join(tmpdir(), "volley-artillery-examples.md"), `${lines.join("\n")}\n`);
