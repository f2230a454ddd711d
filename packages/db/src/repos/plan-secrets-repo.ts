import { sql } from "drizzle-orm";
import type { Plan } from "@volley/contracts";
import type { Db } from "../client";
import { openPlan, sealPlan } from "../plan-secrets-box";
import { currentSealPrefix, type SecretKeys } from "../secret-box";

const BATCH = 200;

/** The tables that store a plan, its plan column and whether it keeps the YAML text. */
const TABLES = [
  { table: "plans", plan: "document", source: true },
  { table: "plan_versions", plan: "document", source: true },
  { table: "runs", plan: "plan", source: false },
  { table: "shards", plan: "plan", source: false },
] as const;

type Row = {
  id: string;
  plan: Plan;
  source: string | null;
  secrets: string | null;
};

/**
 * The one-time pass that seals plans stored before their secrets were (migration 0020 can only add
 * the column: sealing needs VOLLEY_SECRETS_KEY): every row of plans, plan_versions, runs and shards
 * whose `secrets` is null gets its credentials moved out of the plan and its YAML into it, and, with
 * a key, every row still unsealed or sealed under an old key is re-sealed under the current one.
 * The hub runs it at start; it is idempotent, and finds nothing once done. Rows it cannot open (sealed
 * under a key this process lacks) are counted and left as they are.
 */
export async function sealStoredPlans(db: Db, keys: SecretKeys | null): Promise<{ sealed: number; unreadable: number }> {
  let sealed = 0;
  let unreadable = 0;
  for (const t of TABLES) {
    const table = sql.identifier(t.table);
    const planCol = sql.identifier(t.plan);
    const sourceCol = t.source ? sql`"source"` : sql`null::text`;
    const pending = keys ? sql`("secrets" is null or ("secrets" <> '' and "secrets" not like ${`${currentSealPrefix(keys)}%`}))` : sql`"secrets" is null`;
    let after = "";
    for (;;) {
      const { rows } = await db.execute<Row>(
        sql`select id::text as id, ${planCol} as plan, ${sourceCol} as source, "secrets" as secrets from ${table}
            where ${pending} and id::text > ${after} order by id::text limit ${BATCH}`,
      );
      if (rows.length === 0) break;
      for (const row of rows) {
        after = row.id;
        let opened: ReturnType<typeof openPlan>;
        try {
          opened = openPlan({ document: row.plan, source: row.source, secrets: row.secrets }, keys);
        } catch {
          unreadable++;
          continue;
        }
        const next = sealPlan(opened.plan, opened.source, keys);
        const setSource = t.source ? sql`, "source" = ${next.source}` : sql``;
        // Written only if the row is as read (a save in between already stored it sealed).
        await db.execute(
          sql`update ${table} set ${planCol} = ${JSON.stringify(next.document)}::jsonb, "secrets" = ${next.secrets}${setSource}
              where id::text = ${row.id} and "secrets" is not distinct from ${row.secrets}`,
        );
        sealed++;
      }
    }
  }
  return { sealed, unreadable };
}
