import { DEFAULT_ORG_ID } from "@volley/db";

/**
 * The key of an org's pool in the registry and in the shard queue's name. Pools are per org: an
 * agent enrolled by one org's join token must never receive another org's shards (plans carry
 * target secrets). The default org keeps the bare pool name, so queues of self-hosted setups keep
 * theirs. Pool names cannot contain '.', so keys of two orgs never collide.
 */
export function poolKey(orgId: string, pool: string): string {
  return orgId === DEFAULT_ORG_ID ? pool : `${orgId}.${pool}`;
}

/** The org a pool key belongs to (the inverse of poolKey's prefix; pool names hold no '.'). */
export function poolOrg(key: string): string {
  const dot = key.lastIndexOf(".");
  return dot < 0 ? DEFAULT_ORG_ID : key.slice(0, dot);
}
