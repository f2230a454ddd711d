import { request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { startHttpClusterServer, type HttpClusterServer } from "./http-cluster-server";
import { HTTP_PATHS } from "./http-target-server";

const servers: HttpClusterServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

/** One POST on a fresh TCP connection (no keep-alive), so round-robin can hand it to any worker. */
function post(url: string, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("http cluster target", () => {
  it("serves /echo from node:cluster workers on one port, and stops them all on close", async () => {
    const server = await startHttpClusterServer({ workers: 2 });
    servers.push(server);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    expect(server.port).toBeGreaterThan(0);
    const replies = await Promise.all(Array.from({ length: 8 }, (_, i) => post(`${server.url}${HTTP_PATHS.echo}`, `m${i}`)));
    expect(replies).toEqual(Array.from({ length: 8 }, (_, i) => ({ status: 200, body: `m${i}` })));

    await server.close();
    servers.length = 0;
    await expect(post(`${server.url}${HTTP_PATHS.echo}`, "late")).rejects.toMatchObject({ code: "ECONNREFUSED" });
  }, 60_000);

  it("refuses a worker count below 1, naming the field", async () => {
    await expect(startHttpClusterServer({ workers: 0 })).rejects.toThrow(/workers must be a whole number of at least 1/);
  });
});
