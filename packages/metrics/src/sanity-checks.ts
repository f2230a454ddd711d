import { DEFAULT_SANITY, type Plan, type RunSummary } from "@volley/contracts";

type Measured = Omit<RunSummary, "thresholds">;
type SanityResult = RunSummary["thresholds"][number];

const OFF_HINT = "(set `sanity: false` in the plan to allow it)";

/**
 * The default checks that keep a run which measured nothing from passing: some messages sent, some
 * replies or deliveries received, and loss within the plan's limit. Judged on the same merged
 * summary as the thresholds; they fail the run like a threshold, and the reason says they did.
 */
export function sanityChecks(summary: Measured, sanity: Plan["sanity"]): SanityResult[] {
  if (sanity === false) return [];
  const maxLoss = sanity?.maxLossPercent ?? DEFAULT_SANITY.maxLossPercent;
  const d = summary.deliveries;
  const c = summary.canary;
  const sent = summary.messages.sent + (c?.sent ?? 0);
  const back = summary.messages.received + (d?.received ?? 0) + (c?.received ?? 0);
  // Messages a saturated agent shed (too late to send) were planned and never measured: they count as lost.
  const shed = summary.messages.shed ?? 0;
  const due = summary.messages.sent + shed + (d?.expected ?? 0) + (c?.sent ?? 0);
  const lost = summary.messages.lost + shed + (d?.lost ?? 0) + (c?.lost ?? 0);
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
    {
      kind: "sanity",
      expression: "sanity: replies or deliveries received > 0",
      ok: back > 0 || sent === 0,
      actual: back,
      message:
        back > 0 || sent === 0
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
          : `sanity check: ${round(lossPct)}% of the replies and deliveries due were lost (${lost} of ${due}${shed ? `, ${shed} of them shed by a saturated agent: add agents or lower the rate` : ""}), over the ${maxLoss}% limit (sanity.maxLossPercent) ${OFF_HINT}`,
    },
  ];
  return results;
}

function topErrors(s: Measured): string {
  const top = Object.entries(s.errors).filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1]).slice(0, 3);
  return top.length ? top.map(([k, n]) => `${k} ${n}`).join(", ") : "no error class recorded";
}

const round = (n: number) => Math.round(n * 100) / 100;
