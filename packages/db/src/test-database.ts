import { randomBytes } from "node:crypto";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { migrateDatabase, migrationsDir } from "./migrate";

/** Applies the migrations up to and including `tag` (e.g. "0018_run_rate_changes") only, for tests of a later migration's data changes. */
async function migrateUpTo(url: string, tag: string): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), "volley-migrations-"));
  try {
    await cp(migrationsDir(), dir, { recursive: true });
    const journalFile = path.join(dir, "meta", "_journal.json");
    const journal = JSON.parse(await readFile(journalFile, "utf8")) as { entries: { tag: string }[] };
    const last = journal.entries.findIndex((e) => e.tag === tag);
    if (last < 0) throw new Error(`no migration tagged ${tag} in ${migrationsDir()}`);
    journal.entries = journal.entries.slice(0, last + 1);
    await writeFile(journalFile, JSON.stringify(journal));
    await migrateDatabase(url, dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * A fresh, migrated database on the server behind `serverUrl`, dropped by `drop()`. Tests use one
 * each so they can run against a shared PostgreSQL without seeing each other's rows. `upTo` stops
 * after that migration (its tag), so a test can write rows the way they were before a later one.
 */
export async function createTestDatabase(serverUrl: string, opts: { upTo?: string } = {}): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `volley_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const u = new URL(serverUrl);
  u.pathname = `/${name}`;
  const url = u.toString();
  if (opts.upTo !== undefined) await migrateUpTo(url, opts.upTo);
  else await migrateDatabase(url);
  return {
    url,
    async drop() {
      const c = new pg.Client({ connectionString: serverUrl });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}
