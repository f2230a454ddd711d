import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { createDb } from "@volley/db";
import { whileDatabaseDown } from "./wait";

/** A PostgreSQL URL on a port where nothing listens: every query fails as the database being unreachable. */
async function unreachableDatabaseUrl(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return `postgres://postgres@127.0.0.1:${port}/postgres`;
}

describe("whileDatabaseDown", () => {
  it("retries while PostgreSQL cannot be reached, telling onWait once, and returns once it answers", async () => {
    const down = createDb(await unreachableDatabaseUrl(), 1);
    try {
      let attempts = 0;
      const waits: unknown[] = [];
      const value = await whileDatabaseDown(
        async () => {
          attempts++;
          // Unreachable for the first three tries (a real refused connection, wrapped as drizzle wraps it), then an answer.
          if (attempts <= 3) await down.db.execute(sql`select 1`);
          return "stored";
        },
        { maxMs: 30_000, onWait: (err) => waits.push(err) },
      );
      expect(value).toBe("stored");
      expect(attempts).toBe(4);
      expect(waits).toHaveLength(1);
    } finally {
      await down.close();
    }
  });

  it("gives up after maxMs, and never retries an error that is not the database being unreachable", async () => {
    const down = createDb(await unreachableDatabaseUrl(), 1);
    try {
      await expect(whileDatabaseDown(() => down.db.execute(sql`select 1`), { maxMs: 300 })).rejects.toThrow();
      let attempts = 0;
      await expect(
        whileDatabaseDown(
          async () => {
            attempts++;
            throw new Error("a constraint or a bug, not an outage");
          },
          { maxMs: 30_000 },
        ),
      ).rejects.toThrow(/not an outage/);
      expect(attempts).toBe(1);
    } finally {
      await down.close();
    }
  });
});
