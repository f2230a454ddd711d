import type { Plan } from "./plan";
import { walkUserSteps } from "./user-connections";

/**
 * Every URL a plan's flow may send requests to besides target.url: setup requests, message
 * requests, a user's requests and connections, flow.before and flow.after, and the polling target's own poll, with the plan
 * field each sits in. Relative URLs resolve against target.url's host, so only absolute ones
 * (`http://…`, `ws://…`) are listed:
 * the target policy (allowlist, hosted mode's public addresses and ownership proof) checks each
 * of their hosts as it checks target.url's.
 */
export function flowAbsoluteUrls(plan: Pick<Plan, "target" | "flow">): { field: string; url: string }[] {
  const out: { field: string; url: string }[] = [];
  const add = (field: string, url: string | undefined) => {
    if (url !== undefined && /^[a-z][a-z0-9+.-]*:\/\//i.test(url.trim())) out.push({ field, url: url.trim() });
  };
  plan.flow?.setup.forEach((step, i) => {
    if ("request" in step) add(`plan.flow.setup.${i}.request.url`, step.request.url);
  });
  plan.flow?.messages?.forEach((m, i) => {
    add(`plan.flow.messages.${i}.request.url`, m.request?.url);
  });
  // A user's requests and the connections its connect steps open with a url of their own.
  for (const { step, path } of walkUserSteps(plan.flow?.steps ?? [])) {
    if ("request" in step) add(`plan.flow.steps.${path.join(".")}.request.url`, step.request.url);
    if ("connect" in step) add(`plan.flow.steps.${path.join(".")}.connect.url`, step.connect.url);
  }
  for (const hook of ["before", "after"] as const)
    for (const [i, step] of (plan.flow?.[hook] ?? []).entries()) add(`plan.flow.${hook}.${i}.request.url`, step.request.url);
  add("plan.target.polling.poll.url", plan.target.polling?.poll?.url);
  return out;
}

/**
 * The host of an absolute flow URL, lowercased; null when the host is (or holds) a template, which
 * nothing could check before the run. Validation refuses those (flow-validation.ts).
 */
export function literalHost(url: string): string | null {
  const m = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]*)/i.exec(url);
  if (!m || m[1]!.includes("{{") || m[1]!.includes("}}") || m[1] === "") return null;
  return m[1]!.toLowerCase().replace(/^\[|\]$/g, "");
}
