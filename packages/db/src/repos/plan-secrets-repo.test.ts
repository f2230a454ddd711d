import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import "@volley/devstack/vitest-context";
import { sql } from "drizzle-orm";
import { parsePlanDocument, SECRET_MARKER } from "@volley/contracts";
import { createDb, type DbHandle } from "../client";
import { createTestDatabase } from "../test-database";
import { DEFAULT_ORG_ID } from "../schema";
import { parseSecretKeys } from "../secret-box";
import { openPlan } from "../plan-secrets-box";
import { getPlan, insertPlan } from "./plans-repo";
import { getRunOfAnyOrg, insertRun } from "./runs-repo";
import { sealStoredPlans } from "./plan-secrets-repo";

let testDb: Awaited<ReturnType<typeof createTestDatabase>>;
let h: DbHandle;

beforeAll(async () => {
  testDb = await createTestDatabase(inject("databaseServerUrl"));
  h = createDb(testDb.url);
});
afterAll(async () => {
  await h?.close();
  await testDb?.drop();
});

const keys = parseSecretKeys(randomBytes(32).toString("base64"));
const yaml = `name: stomp # kept
target:
  url: ws://127.0.0.1:15674/ws
  protocol: stomp
  headers: { Authorization: Bearer tok-AAA }
  stomp: { login: guest, passcode: pass-BBB }
connections: { count: 1 }
scenario: { kind: echo, duration: 2s, message: { rate: 1 } }
`;
const parsed = parsePlanDocument(yaml);
if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
const plan = parsed.plan;

const rawRows = async () =>
  JSON.stringify(
    (await h.db.execute(sql`select p.document, p.source, p.secrets, v.document, v.source, v.secrets from plans p join plan_versions v on v.plan_id = p.id`))
      .rows,
  );

describe("plans' secrets at rest", () => {
  it("stores plan and YAML redacted, the secrets sealed, and opens them to the author's exact text", async () => {
    const row = await insertPlan(h.db, { orgId: DEFAULT_ORG_ID, document: plan, source: yaml, secretsKeys: keys });
    const raw = await rawRows();
    expect(raw).not.toMatch(/tok-AAA|pass-BBB/);
    expect(row.document.target.stomp?.passcode).toBe(SECRET_MARKER);
    expect(row.source).toContain(`passcode: "${SECRET_MARKER}"`);
    const opened = openPlan((await getPlan(h.db, row.id, DEFAULT_ORG_ID))!, keys);
    expect(opened.plan).toEqual(plan);
    expect(opened.source).toBe(yaml);
  });

  it("seals rows written before sealing at start, once, and re-seals rows under an old key", async () => {
    const before = await insertRun(h.db, { plan, secrets: null }); // as a row from before migration 0020
    expect(JSON.stringify((await h.db.execute(sql`select plan from runs where id = ${before.id}`)).rows)).toContain("pass-BBB");
    const first = await sealStoredPlans(h.db, keys);
    expect(first.sealed).toBeGreaterThanOrEqual(1);
    const run = (await getRunOfAnyOrg(h.db, before.id))!;
    expect(JSON.stringify(run.plan)).not.toMatch(/tok-AAA|pass-BBB/);
    expect(run.secrets).toMatch(/^vsec1:/);
    expect(openPlan({ document: run.plan, source: null, secrets: run.secrets }, keys).plan).toEqual(plan);
    expect((await sealStoredPlans(h.db, keys)).sealed).toBe(0);

    const rotated = parseSecretKeys(randomBytes(32).toString("base64"), keys.current.toString("base64"));
    expect((await sealStoredPlans(h.db, rotated)).sealed).toBeGreaterThanOrEqual(3); // the plan, its version, the run
    const again = (await getRunOfAnyOrg(h.db, before.id))!;
    expect(openPlan({ document: again.plan, source: null, secrets: again.secrets }, parseSecretKeys(rotated.current.toString("base64"))).plan).toEqual(plan);
  });
});
