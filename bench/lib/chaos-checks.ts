/**
 * What bench/chaos-soak.ts checks once the faults stop, from the stack's own PostgreSQL: every run
 * final with a reason a fault explains, and every frame an agent counted in its shard.end stored.
 */
import pg from "pg";

export interface Fault {
  at: number;
  victim: string;
  kind: "kill" | "freeze";
  pids: number[];
  /** Freeze length, ms (0 for a kill). */
  ms: number;
}

export interface Violation {
  kind: string;
  runId?: string;
  shardId?: string;
  detail: string;
}

export interface RunRow {
  id: string;
  name: string;
  status: string;
  reason: string | null;
  created: number;
  ended: number | null;
  sent: number | null;
}

export interface ShardRow {
  runId: string;
  id: string;
  status: string;
  error: string | null;
  frames: number;
  stored: number;
  inRange: number;
  maxSeq: number;
}

export interface CheckResult {
  runs: RunRow[];
  byStatus: Record<string, number>;
  byReason: Record<string, number>;
  shardsChecked: number;
  framesReported: number;
  framesStored: number;
  shardsWithoutEnd: number;
  violations: Violation[];
  suspects: Violation[];
}

const FINAL = new Set(["passed", "failed", "errored", "aborted", "degraded", "inconclusive"]);
/** How long after a fault its effects may still end a run: restart backoff, reconnect grace, stalled-job recovery. */
const AFTERMATH_MS = 90_000;

/** A reason with its ids and numbers blanked, to count runs by kind of reason. */
export const reasonKind = (r: string | null) =>
  r === null
    ? "(none)"
    : r
        .replace(/\b[a-z]{3}_[0-9a-z]{16}\b/g, "<id>")
        .replace(/\d+(\.\d+)?/g, "N")
        .slice(0, 180);

/** Judges the runs of `orgId` created since `sinceMs` (every org's when absent). */
export async function checkStore(
  databaseUrl: string,
  sinceMs: number,
  faults: Fault[],
  plannedSent: Record<string, number>,
  orgId?: string,
): Promise<CheckResult> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const runs = (
      await client.query<{ id: string; name: string; status: string; reason: string | null; created: Date; ended: Date | null; sent: string | null }>(
        `select id, name, status, reason, created_at as created, ended_at as ended, (summary->'messages'->>'sent') as sent
           from runs where created_at >= to_timestamp($1 / 1000.0) and ($2::text is null or org_id = $2) order by created_at`,
        [sinceMs, orgId ?? null],
      )
    ).rows.map(
      (r): RunRow => ({
        id: r.id,
        name: r.name,
        status: r.status,
        reason: r.reason,
        created: r.created.getTime(),
        ended: r.ended?.getTime() ?? null,
        sent: r.sent === null ? null : Number(r.sent),
      }),
    );
    const shards = (
      await client.query<{
        run_id: string;
        id: string;
        status: string;
        error: string | null;
        frames: number;
        stored: string;
        in_range: string;
        max_seq: number;
      }>(
        `select s.run_id, s.id, s.status, s.error, s.frames,
                count(i.id) as stored,
                count(distinct i.seq) filter (where i.seq < s.frames) as in_range,
                coalesce(max(i.seq), -1) as max_seq
           from shards s join runs r on r.id = s.run_id left join run_intervals i on i.shard_id = s.id
          where r.created_at >= to_timestamp($1 / 1000.0) and ($2::text is null or r.org_id = $2)
          group by s.id`,
        [sinceMs, orgId ?? null],
      )
    ).rows.map(
      (r): ShardRow => ({
        runId: r.run_id,
        id: r.id,
        status: r.status,
        error: r.error,
        frames: r.frames,
        stored: Number(r.stored),
        inRange: Number(r.in_range),
        maxSeq: r.max_seq,
      }),
    );
    const storedSent = new Map(
      (
        await client.query<{ run_id: string; sent: string }>(
          `select i.run_id, sum(coalesce((i.counters->>'messages.sent')::bigint, 0)) as sent
             from run_intervals i join runs r on r.id = i.run_id
            where r.created_at >= to_timestamp($1 / 1000.0) and ($2::text is null or r.org_id = $2) and not i.warmup group by i.run_id`,
          [sinceMs, orgId ?? null],
        )
      ).rows.map((r) => [r.run_id, Number(r.sent)]),
    );
    return judge(runs, shards, storedSent, faults, plannedSent);
  } finally {
    await client.end();
  }
}

function judge(runs: RunRow[], shards: ShardRow[], storedSent: Map<string, number>, faults: Fault[], plannedSent: Record<string, number>): CheckResult {
  const violations: Violation[] = [];
  const suspects: Violation[] = [];
  const byStatus: Record<string, number> = {};
  const byReason: Record<string, number> = {};
  for (const run of runs) {
    byStatus[run.status] = (byStatus[run.status] ?? 0) + 1;
    const key = `${run.status}: ${reasonKind(run.reason)}`;
    byReason[key] = (byReason[key] ?? 0) + 1;
    if (!FINAL.has(run.status)) {
      violations.push({ kind: "not final", runId: run.id, detail: `still ${run.status} after the soak (created ${new Date(run.created).toISOString()})` });
      continue;
    }
    const end = run.ended ?? Date.now();
    const during = faults.filter((f) => f.at <= end && f.at + f.ms + AFTERMATH_MS >= run.created);
    const faultText = during.map((f) => `${f.kind} ${f.victim} at ${new Date(f.at).toISOString().slice(11, 19)}`).join(", ") || "none";
    if (run.status === "passed") {
      if (!run.sent) violations.push({ kind: "passed with nothing sent", runId: run.id, detail: `summary.messages.sent ${run.sent}` });
      const planned = plannedSent[run.name];
      if (planned && run.sent !== null && run.sent < planned * 0.95)
        suspects.push({ kind: "passed below plan", runId: run.id, detail: `sent ${run.sent} of ${planned} planned; faults: ${faultText}` });
    } else {
      if (!run.reason?.trim()) violations.push({ kind: "no reason", runId: run.id, detail: `${run.status} without a reason; faults: ${faultText}` });
      if (during.length === 0)
        violations.push({
          kind: "unexplained",
          runId: run.id,
          detail: `${run.status} with no fault within its lifetime (+${AFTERMATH_MS / 1000} s): ${run.reason}`,
        });
      else if (/\blost\b/.test(run.reason ?? "") && !during.some((f) => f.victim === "agent" || f.victim === "hub")) {
        suspects.push({ kind: "agent loss without an agent or hub fault", runId: run.id, detail: `${run.reason} — faults: ${faultText}` });
      }
    }
    const stored = storedSent.get(run.id);
    if (run.sent !== null && stored !== undefined && stored !== run.sent) {
      suspects.push({
        kind: "summary differs from stored frames",
        runId: run.id,
        detail: `summary.messages.sent ${run.sent}, stored intervals sum ${stored} (${run.status})`,
      });
    }
  }
  let shardsChecked = 0;
  let framesReported = 0;
  let framesStored = 0;
  let shardsWithoutEnd = 0;
  for (const s of shards) {
    if (s.frames === 0) {
      // No shard.end count (lost agent, never started): nothing the agent acknowledged to compare with.
      if (s.stored > 0) shardsWithoutEnd++;
      continue;
    }
    shardsChecked++;
    framesReported += s.frames;
    framesStored += s.inRange;
    if (s.inRange < s.frames) {
      violations.push({
        kind: "acknowledged frame missing",
        runId: s.runId,
        shardId: s.id,
        detail: `shard.end counted ${s.frames} frames (seq 0..${s.frames - 1}), ${s.inRange} of them stored (${s.stored} rows, max seq ${s.maxSeq}); shard ${s.status}${s.error ? `: ${s.error}` : ""}`,
      });
    }
    if (s.maxSeq >= s.frames)
      suspects.push({ kind: "frames beyond shard.end", runId: s.runId, shardId: s.id, detail: `max seq ${s.maxSeq}, shard.end counted ${s.frames}` });
  }
  return { runs, byStatus, byReason, shardsChecked, framesReported, framesStored, shardsWithoutEnd, violations, suspects };
}

/** The most agent rows one join token may hold (the hub's HUB_MAX_AGENTS_PER_TOKEN default). */
export const AGENTS_PER_TOKEN_CAP = 200;

/**
 * What the abuse episodes left, from the stack's PostgreSQL: org B's runs are final with a reason,
 * its agent rows within the per-token cap; and from the episodes themselves, no bomb frame was
 * acknowledged and no wrong token welcomed.
 */
export async function checkAbuse(
  databaseUrl: string,
  sinceMs: number,
  orgA: string,
  episodes: { kind: string; outcome: Record<string, number>; runId?: string }[],
): Promise<{ orgB: { runs: Record<string, number>; reasons: string[]; agentRows: number; auditEvents: Record<string, number> }; violations: Violation[] }> {
  const violations: Violation[] = [];
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const runs = (
      await client.query<{ id: string; status: string; reason: string | null }>(
        "select id, status, reason from runs where created_at >= to_timestamp($1 / 1000.0) and org_id <> $2",
        [sinceMs, orgA],
      )
    ).rows;
    const byStatus: Record<string, number> = {};
    for (const r of runs) {
      byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
      if (!FINAL.has(r.status)) violations.push({ kind: "abuse: org B's run not final", runId: r.id, detail: `still ${r.status}` });
      else if (r.status !== "passed" && !r.reason?.trim()) violations.push({ kind: "abuse: no reason", runId: r.id, detail: `${r.status} without a reason` });
    }
    const perToken = (
      await client.query<{ token: string | null; n: string }>("select token_id as token, count(*) as n from agents where org_id <> $1 group by token_id", [orgA])
    ).rows;
    const agentRows = perToken.reduce((n, r) => n + Number(r.n), 0);
    for (const r of perToken)
      if (Number(r.n) > AGENTS_PER_TOKEN_CAP)
        violations.push({ kind: "abuse: agent rows unbounded", detail: `org B's join token ${r.token} holds ${r.n} agent rows (cap ${AGENTS_PER_TOKEN_CAP})` });
    const audit = (
      await client.query<{ action: string; n: string }>(
        "select action, count(*) as n from audit_events where at >= to_timestamp($1 / 1000.0) and org_id <> $2 group by action",
        [sinceMs, orgA],
      )
    ).rows;
    for (const e of episodes) {
      // Maximal histograms are valid (stored until the agent's budget cuts it off); bombs and garbage never are.
      for (const bad of ["bomb", "oversize", "malformed"]) {
        const acked = e.outcome[`${bad}: acked ok`] ?? 0;
        if (acked > 0) violations.push({ kind: "abuse: bad frame acknowledged", runId: e.runId, detail: `${acked} ${bad} frames acknowledged` });
      }
      if (e.kind === "badToken" && (e.outcome["welcomed (should not be)"] ?? 0) > 0)
        violations.push({ kind: "abuse: wrong token welcomed", detail: `${e.outcome["welcomed (should not be)"]} handshakes with a wrong token welcomed` });
      if ((e.outcome["episode failed"] ?? 0) > 0) violations.push({ kind: "abuse: episode failed", detail: `${e.kind}: ${JSON.stringify(e.outcome)}` });
    }
    return {
      orgB: {
        runs: byStatus,
        reasons: [...new Set(runs.map((r) => reasonKind(r.reason)))],
        agentRows,
        auditEvents: Object.fromEntries(audit.map((a) => [a.action, Number(a.n)])),
      },
      violations,
    };
  } finally {
    await client.end();
  }
}
