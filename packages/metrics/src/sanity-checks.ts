import { DEFAULT_SANITY, type Plan, type RunSummary } from "@volley/contracts";
import type { FrameLike } from "./aggregate";

type Measured = Omit<RunSummary, "thresholds">;
type SanityResult = RunSummary["thresholds"][number];

const OFF_HINT = "(set `sanity: false` in the plan to allow it)";
/**
 * An event-loop stall this long is the agent not running at all (process paused, VM frozen, a
 * blocking call), not load: under load a turn sends for at most 10 ms before the loop runs again.
 */
export const AGENT_STALL_MS = 2000;

/** What the frames say about the agents themselves, beyond the merged counts: why messages went missing. */
export interface AgentEvidence {
  /** The longest event-loop stall any agent reported, ms. */
  stallMaxMs: number;
  /** Intervals some agent reported itself saturated in (CPU, event loop, send lag or shedding). */
  saturatedIntervals: number;
  /** Agents whose frames stop before the run's last interval or skip intervals: what they measured then is missing. */
  silent: Array<{ agentId: string; missing: number }>;
}

/** Reads AgentEvidence from a run's frames (agents are known only on frames that name them). */
export function agentEvidence(frames: readonly FrameLike[]): AgentEvidence {
  let stallMaxMs = 0;
  const saturated = new Set<number>();
  const byAgent = new Map<string, Set<number>>();
  let last = -1;
  for (const f of frames) {
    stallMaxMs = Math.max(stallMaxMs, f.health.eventLoopDelayMs.max);
    if (f.health.saturated) saturated.add(f.index);
    last = Math.max(last, f.index);
    if (!f.agentId) continue;
    let seen = byAgent.get(f.agentId);
    if (!seen) byAgent.set(f.agentId, (seen = new Set()));
    seen.add(f.index);
  }
  const silent = [...byAgent].flatMap(([agentId, seen]) => {
    // From its first interval (an agent may start in a later stage) to its last, then up to the
    // run's last but one: shards end within a final partial interval of each other.
    const first = Math.min(...seen);
    const own = Math.max(...seen);
    const missing = own - first + 1 - seen.size + Math.max(0, last - own - 1);
    return missing > 0 ? [{ agentId, missing }] : [];
  });
  return { stallMaxMs, saturatedIntervals: saturated.size, silent };
}

/**
 * The default checks that keep a run which measured nothing from passing: some messages sent, some
 * replies or deliveries received, and loss within the plan's limit. Judged on the same merged
 * summary as the thresholds; they fail the run like a threshold, and the reason says they did.
 */
export function sanityChecks(summary: Measured, sanity: Plan["sanity"], agents?: AgentEvidence): SanityResult[] {
  if (sanity === false) return [];
  const maxLoss = sanity?.maxLossPercent ?? DEFAULT_SANITY.maxLossPercent;
  if (summary.users) return usersSanity(summary, summary.users, maxLoss);
  const d = summary.deliveries;
  const c = summary.canary;
  const sent = summary.messages.sent + (c?.sent ?? 0);
  const back = summary.messages.received + (d?.received ?? 0) + (c?.received ?? 0);
  // Messages a saturated agent shed (too late to send) were planned and never measured: they count as lost.
  const shed = summary.messages.shed ?? 0;
  // Messages never sent because the server had closed their connection were planned too: lost.
  const unsent = summary.messages.unsent ?? 0;
  const due = summary.messages.sent + shed + unsent + (d?.expected ?? 0) + (c?.sent ?? 0);
  const lost = summary.messages.lost + shed + unsent + (d?.lost ?? 0) + (c?.lost ?? 0);
  const lossPct = due > 0 ? (100 * lost) / due : 0;
  const failedConnects = summary.connect.failed > 0 ? ` (${summary.connect.failed} connection attempts failed: ${topErrors(summary)})` : "";
  const results: SanityResult[] = [
    {
      kind: "sanity",
      expression: "sanity: messages sent > 0",
      ok: sent > 0,
      actual: sent,
      message: sent > 0 ? `sanity: ${sent} messages sent` : `sanity check: no message was sent${failedConnects} ${OFF_HINT}`,
    },
  ];
  // With nothing sent, nothing could come back or be lost: those checks are not judged (a green
  // "received > 0" beside 0 received would say the opposite of what happened), the first one fails.
  if (sent === 0) return results;
  results.push(
    {
      kind: "sanity",
      expression: "sanity: replies or deliveries received > 0",
      ok: back > 0,
      actual: back,
      message:
        back > 0
          ? `sanity: ${back} replies and deliveries received`
          : `sanity check: nothing came back from the target (${sent} sent, 0 replies or deliveries): check target.url and that the server answers the plan's messages ${OFF_HINT}`,
    },
    {
      kind: "sanity",
      expression: `sanity: loss <= ${maxLoss}%`,
      ok: lossPct <= maxLoss,
      actual: round(lossPct),
      message:
        lossPct <= maxLoss
          ? `sanity: ${round(lossPct)}% lost`
          : `sanity check: ${round(lossPct)}% of the replies and deliveries due were lost (${lost} of ${due}${unsent ? `, ${unsent} of them never sent because the server had closed their connections` : ""}${lossCause(shed, summary, agents)}), over the ${maxLoss}% limit (sanity.maxLossPercent) ${OFF_HINT}`,
    },
  );
  return results;
}

/**
 * Users runs: users that finished (a run whose users all failed measured nothing), failed users and
 * lost replies within the loss limit. A user may send nothing or nothing awaited (HTTP requests,
 * fire-and-forget sends), so sends and replies are judged only where replies were awaited.
 */
function usersSanity(summary: Measured, users: NonNullable<Measured["users"]>, maxLoss: number): SanityResult[] {
  const failedPct = users.started > 0 ? (100 * users.failed) / users.started : 0;
  const topSteps = users.steps
    .filter((st) => st.failed > 0)
    .sort((a, b) => b.failed - a.failed)
    .slice(0, 3)
    .map((st) => `${st.step} ${st.failed}`)
    .join(", ");
  const why = [topSteps && `; failed steps: ${topSteps}`, summary.connect.failed > 0 && `; ${summary.connect.failed} connects failed: ${topErrors(summary)}`]
    .filter(Boolean)
    .join("");
  const results: SanityResult[] = [
    {
      kind: "sanity",
      expression: "sanity: users completed > 0",
      ok: users.completed > 0,
      actual: users.completed,
      message:
        users.completed > 0
          ? `sanity: ${users.completed} users completed`
          : `sanity check: no user finished its steps (${users.started} started, ${users.dropped} dropped${why}) ${OFF_HINT}`,
    },
  ];
  if (users.started === 0) return results;
  results.push({
    kind: "sanity",
    expression: `sanity: users failed <= ${maxLoss}%`,
    ok: failedPct <= maxLoss,
    actual: round(failedPct),
    message:
      failedPct <= maxLoss
        ? `sanity: ${round(failedPct)}% of users failed`
        : `sanity check: ${round(failedPct)}% of users failed (${users.failed} of ${users.started}${why}), over the ${maxLoss}% limit (sanity.maxLossPercent) ${OFF_HINT}`,
  });
  return results;
}

/**
 * Why the messages were lost, as far as the agents' own reports tell; saturation is blamed only when
 * an agent shed messages or flagged itself saturated without having stopped. Empty when the agents
 * ran normally: then the target (or the network) lost them, which the count already says.
 */
function lossCause(shed: number, summary: Measured, agents: AgentEvidence | undefined): string {
  const parts: string[] = [];
  const stalled = agents && agents.stallMaxMs >= AGENT_STALL_MS;
  if (stalled) {
    const resumed = shed ? `, and ${shed} of them were shed when it resumed, too late to send` : "";
    parts.push(
      `an agent stopped running for up to ${round(agents.stallMaxMs / 1000)} s (its process was paused or blocked, not overloaded)${resumed}: check the agent's host`,
    );
  } else if (shed) {
    parts.push(`${shed} of them shed by a saturated agent: add agents or lower the rate`);
  } else if ((agents?.saturatedIntervals ?? summary.intervals.saturated) > 0) {
    const n = agents?.saturatedIntervals ?? summary.intervals.saturated;
    parts.push(
      `an agent reported itself saturated in ${n} interval${n === 1 ? "" : "s"}, which may have delayed replies past the timeout: add agents or lower the rate`,
    );
  }
  for (const a of agents?.silent ?? []) parts.push(`agent ${a.agentId} stopped reporting (${a.missing} interval${a.missing === 1 ? "" : "s"} missing)`);
  return parts.length > 0 ? `, ${parts.join("; ")}` : "";
}

function topErrors(s: Measured): string {
  const top = Object.entries(s.errors)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3);
  return top.length ? top.map(([k, n]) => `${k} ${n}`).join(", ") : "no error class recorded";
}

const round = (n: number) => Math.round(n * 100) / 100;
