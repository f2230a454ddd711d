import { addTargetHostBodySchema, flowAbsoluteUrls, literalHost, type Plan } from "@volley/contracts";
import { getTargetHostByName, orgLoad, setTargetHostVerified, type Db } from "@volley/db";
import { AdmissionRefusal } from "./admission-refusal";
import { assertWithinQuotas, checkTarget, systemResolver, type Resolver, type TargetPolicy } from "./target-policy";
import { checkProof, proofInstructions, type ProofOptions } from "./target-verification";

/**
 * Everything a plan must pass before a run of it is queued, whoever starts it (web's API and UI,
 * the hub when a schedule fires): the target policy (allowlist, or public addresses when hosted)
 * and, in hosted mode, the quotas (the org's or owner's runs already going included) and every
 * host's ownership proof, re-checked now. Returns the host and what it resolved to, for the
 * caller's audit record; throws AdmissionRefusal saying why not.
 */
export async function admitPlan(
  db: Db,
  orgId: string,
  plan: Plan,
  policy: TargetPolicy,
  opts: { resolve?: Resolver; proof?: ProofOptions } = {},
): Promise<{ host: string; addresses: string[] }> {
  const { host, addresses, flowHosts } = await checkTarget(plan, policy, opts.resolve ?? systemResolver);
  if (policy.mode !== "hosted") return { host, addresses };
  const { quotas, inFlight, orgCount } = await orgLoad(db, orgId);
  assertWithinQuotas(plan, { ...policy.quotas, ...quotas }, inFlight, orgCount);
  // Every host the run reaches is the org's own: target.url's and each host a flow request names.
  const fieldOf = (h: string) => (h === host ? "plan.target.url" : (flowAbsoluteUrls(plan).find((u) => literalHost(u.url) === h)?.field ?? "plan.flow"));
  for (const h of [host, ...flowHosts]) {
    const field = fieldOf(h);
    const row = await getTargetHostByName(db, orgId, h);
    // Only what the targets API takes: ownership is proved for a DNS name, never for an IP address.
    const how = addTargetHostBodySchema.safeParse({ host: h }).success
      ? `add it with POST /api/v1/targets {"host":"${h}"} and serve the token it gives you (or publish it as a TXT record), then POST /api/v1/targets/{id}/verify`
      : `ownership is proved for DNS host names only (a token served on the host, or a TXT record), never for an IP address: in ${field}, use a host name you own that resolves to it, add that with POST /api/v1/targets {"host":"<name>"}, then POST /api/v1/targets/{id}/verify`;
    if (!row)
      throw new AdmissionRefusal("target_unverified", `${h} is not a verified target of this organization; ${how}`, [
        { path: field, message: `${h} is not verified` },
      ]);
    const method = await checkProof(row.host, row.token, opts.proof);
    await setTargetHostVerified(db, row.id, method);
    if (!method)
      throw new AdmissionRefusal(
        "target_unverified",
        `the ownership proof for ${h} is no longer there (checked just now); ${proofInstructions(h, row.token).http}, or ${proofInstructions(h, row.token).dns}`,
        [{ path: field, message: `${h}'s proof is gone` }],
      );
  }
  return { host, addresses };
}
