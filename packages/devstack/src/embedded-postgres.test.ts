import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startEmbeddedPostgres } from "./embedded-postgres";

const tmp = mkdtempSync(path.join(os.tmpdir(), "volley-embedded-pg-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

describe("embedded PostgreSQL", () => {
  // `npm run setup` used to end with "…(data in …): undefined": the package rejects with nothing when
  // the server exits before it is ready, and the server's own words were thrown away.
  it("that cannot start says why, in the server's own words", async () => {
    const dir = path.join(tmp, "pg");
    const port = await freePort();
    const pg = await startEmbeddedPostgres({ dir, port });
    await pg.stop();
    appendFileSync(path.join(dir, "postgresql.conf"), "\nshared_buffers = 'plenty'\n");
    const failed = await startEmbeddedPostgres({ dir, port }).then(
      () => null,
      (e: Error) => e.message,
    );
    expect(failed).not.toMatch(/undefined/);
    expect(failed).toMatch(/did not start on port \d+ .*: it exited before it was ready; it said: .*shared_buffers/);
  }, 120_000);
});
