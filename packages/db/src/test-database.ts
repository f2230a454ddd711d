import { randomBytes } from "node:crypto";
import pg from "pg";
import { migrateDatabase } from "./migrate";

/**
 * A fresh, migrated database on the server behind `serverUrl`, dropped by `drop()`. Tests use one
 * each so they can run against a shared PostgreSQL without seeing each other's rows.
 */
export async function createTestDatabase(serverUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `volley_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const u = new URL(serverUrl);
  u.pathname = `/${name}`;
  const url = u.toString();
  await migrateDatabase(url);
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
