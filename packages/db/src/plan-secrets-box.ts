import { getAtPath, planSecrets, redactPlan, redactYamlSource, restoreYamlSource, setAtPath, type Plan, type SecretPath } from "@volley/contracts";
import { isSealed, openSecret, SecretKeyError, sealSecret, type SecretKeys } from "./secret-box";

/**
 * Target credentials inside plans (contracts planSecrets: credential headers, STOMP passcodes, MQTT
 * passwords, Socket.IO auth, URL passwords and tokens, login bodies) are stored apart from the plan:
 * the plan column (plans.document, plan_versions.document, runs.plan, shards.plan) and the YAML text
 * hold each one as SECRET_MARKER, and the row's `secrets` column holds them sealed (secret-box,
 * VOLLEY_SECRETS_KEY; as JSON when no key is set) with the text each had in the author's YAML, so an
 * authorised reader gets the text back byte for byte. A database read, a viewer or a read token
 * never sees them.
 *
 * `secrets`: "" when the plan has none; null on rows written before this existed (their plan may
 * still hold secrets in clear until sealStoredPlans has passed over them; readers treat them as
 * unsealed and redact them on the fly).
 */

export interface SealedPlan {
  document: Plan;
  source: string | null;
  secrets: string;
}

interface Envelope {
  /** Each secret's path in the plan and its value. */
  v: [SecretPath, string][];
  /** Each secret's path and the text it had in the YAML source (empty without one). */
  s: [SecretPath, string][];
}

/**
 * The stored form of a plan and its YAML: secrets redacted in both, sealed in `secrets`. A YAML text
 * that cannot be redacted in place (a secret reached only through a merge key) is not kept; readers
 * get the plan as YAML instead.
 */
export function sealPlan(plan: Plan, source: string | null | undefined, keys: SecretKeys | null): SealedPlan {
  const found = planSecrets(plan);
  if (found.length === 0) return { document: plan, source: source ?? null, secrets: "" };
  const redacted = source ? redactYamlSource(source, plan) : null;
  const envelope: Envelope = { v: found.map((s) => [s.path, getAtPath(plan, s.path) as string]), s: redacted?.originals ?? [] };
  const json = JSON.stringify(envelope);
  return { document: redactPlan(plan), source: redacted?.text ?? null, secrets: keys ? sealSecret(json, keys) : json };
}

/** The stored form for viewers and read tokens: as stored, or, on a row from before sealing, redacted now. */
export function redactedPlan(stored: { document: Plan; source: string | null; secrets: string | null }): { document: Plan; source: string | null } {
  if (stored.secrets !== null) return { document: stored.document, source: stored.source };
  const { document, source } = sealPlan(stored.document, stored.source, null);
  return { document, source };
}

/**
 * The plan and YAML with their secrets back, for the hub (which runs it) and for readers who may
 * edit it. `reseal`: the envelope is unsealed (no key when it was written) or under an old key.
 * Throws SecretKeyError when it was sealed under a key this process lacks.
 */
export function openPlan(
  stored: { document: Plan; source: string | null; secrets: string | null },
  keys: SecretKeys | null,
): { plan: Plan; source: string | null; reseal: boolean } {
  if (!stored.secrets) return { plan: stored.document, source: stored.source, reseal: false };
  let json: string;
  let reseal = false;
  if (keys) ({ plain: json, reseal } = openSecret(stored.secrets, keys));
  else if (isSealed(stored.secrets))
    throw new SecretKeyError(
      "a plan's secrets are sealed, but VOLLEY_SECRETS_KEY is not set here: give this process the same VOLLEY_SECRETS_KEY as web and hub",
    );
  else json = stored.secrets;
  const envelope = JSON.parse(json) as Envelope;
  const plan = structuredClone(stored.document);
  for (const [path, value] of envelope.v) setAtPath(plan, path, value);
  const source = stored.source === null ? null : restoreYamlSource(stored.source, envelope.s);
  return { plan, source, reseal };
}
