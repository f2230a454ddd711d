import path from "node:path";
import { fileURLToPath } from "node:url";
import { drizzle } from "drizzle-orm/node-postgres";
import { migrate } from "drizzle-orm/node-postgres/migrator";
import pg from "pg";

/** Resolved when called, not at import: bundlers (Next's Turbopack) treat a module-level URL of a folder as an asset. */
export function migrationsDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  return path.join(here, "..", "migrations");
}
// Any fixed number; held while migrating so hub replicas starting together apply each migration once.
const MIGRATION_LOCK = 7_340_211;

/** Applies pending drizzle-kit migrations (of `folder`, default migrationsDir()) under an advisory lock. */
export async function migrateDatabase(databaseUrl: string, folder = migrationsDir()): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query("select pg_advisory_lock($1)", [MIGRATION_LOCK]);
    await migrate(drizzle(client), { migrationsFolder: folder });
  } finally {
    await client.query("select pg_advisory_unlock($1)", [MIGRATION_LOCK]).catch(() => {});
    await client.end();
  }
}
