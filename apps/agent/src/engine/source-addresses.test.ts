import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { WebSocketServer } from "ws";
import { planSchema } from "@volley/contracts";
import { loadEnv } from "../env";
import { runShard } from "./run-shard";
import { MAX_SOURCE_ADDRESSES, parseSourceAddresses, sourceAddressFor } from "./source-addresses";

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
  vi.restoreAllMocks();
});

/** A ws echo target on 127.0.0.1 that remembers the remote address of every connection it accepted. */
async function recordingEcho(): Promise<{ url: string; remotes: string[] }> {
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  const remotes: string[] = [];
  wss.on("connection", (ws, req) => {
    remotes.push(req.socket.remoteAddress ?? "?");
    ws.on("message", (data, isBinary) => ws.send(data, { binary: isBinary }));
  });
  await new Promise<void>((resolve) => wss.once("listening", resolve));
  cleanup.push(
    () =>
      new Promise<void>((resolve) => {
        for (const ws of wss.clients) ws.terminate();
        wss.close(() => resolve());
      }),
  );
  return { url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/echo`, remotes };
}

const countBy = (xs: string[]) => Object.fromEntries([...new Set(xs)].sort().map((x) => [x, xs.filter((y) => y === x).length]));

describe("source addresses", () => {
  it("parses addresses and ranges, IPv4 and IPv6, in order and without duplicates", () => {
    expect(parseSourceAddresses("127.0.0.2-127.0.0.4, 127.0.0.9,127.0.0.3")).toEqual({
      ok: true,
      addresses: ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.9"],
    });
    expect(parseSourceAddresses("127.0.0.255-127.0.1.1")).toEqual({ ok: true, addresses: ["127.0.0.255", "127.0.1.0", "127.0.1.1"] });
    expect(parseSourceAddresses("::1,fd00::fffe-fd00::1:0")).toEqual({
      ok: true,
      addresses: ["::1", "fd00:0:0:0:0:0:0:fffe", "fd00:0:0:0:0:0:0:ffff", "fd00:0:0:0:0:0:1:0"],
    });
    expect(parseSourceAddresses("::ffff:127.0.0.1-::ffff:127.0.0.2")).toEqual({ ok: true, addresses: ["0:0:0:0:0:ffff:7f00:1", "0:0:0:0:0:ffff:7f00:2"] });
  });

  it("says what is wrong with a bad list and how to write it", () => {
    const error = (text: string) => {
      const r = parseSourceAddresses(text);
      return r.ok ? "accepted" : r.error;
    };
    expect(error("127.0.0.300")).toMatch(/"127.0.0.300" is not an IPv4 or IPv6 address; .*e\.g\. 127\.0\.0\.2-127\.0\.0\.9/);
    expect(error("127.0.0.9-127.0.0.2")).toMatch(/runs backwards; put the lower address first/);
    expect(error("127.0.0.2-::1")).toMatch(/not a range of two IPv4 or two IPv6 addresses/);
    expect(error("127.0.0.2,,127.0.0.3")).toMatch(/empty item/);
    expect(error(" ")).toMatch(/at least one address/);
    expect(error("10.0.0.0-10.1.0.0")).toMatch(new RegExp(`more than ${MAX_SOURCE_ADDRESSES} addresses`));
  });

  it("assigns connection i the address i mod n", () => {
    const pool = ["127.0.0.2", "127.0.0.3", "127.0.0.4"];
    expect([0, 1, 2, 3, 4, 5, 7].map((i) => sourceAddressFor(pool, i).localAddress)).toEqual([...pool, ...pool, "127.0.0.3"]);
    expect(sourceAddressFor([], 3)).toEqual({});
    expect(sourceAddressFor(undefined, 3)).toEqual({});
  });

  it("spreads a shard's connections over the pool, round-robin, as the target sees them", { timeout: 20_000 }, async () => {
    const target = await recordingEcho();
    const plan = planSchema.parse({
      name: "source addresses",
      target: { url: target.url, connectTimeout: "2s" },
      connections: { count: 6, rate: 1000 },
      scenario: { kind: "echo", message: { rate: 10, bytes: 64 }, duration: "500ms" },
    });
    const outcome = await runShard(plan, { startAt: Date.now() + 20, onFrame: () => {}, sourceAddresses: ["127.0.0.2", "127.0.0.3", "127.0.0.4"] });
    expect(outcome.status, outcome.error).toBe("completed");
    expect(outcome.totals.opened).toBe(6);
    expect(outcome.totals.received).toBeGreaterThan(0);
    expect(countBy(target.remotes)).toEqual({ "127.0.0.2": 2, "127.0.0.3": 2, "127.0.0.4": 2 });
  });

  it("without a pool the OS picks the address, as before", { timeout: 20_000 }, async () => {
    const target = await recordingEcho();
    const plan = planSchema.parse({
      name: "no pool",
      target: { url: target.url, connectTimeout: "2s" },
      connections: { count: 3, rate: 1000 },
      scenario: { kind: "echo", message: { rate: 10, bytes: 64 }, duration: "200ms" },
    });
    const outcome = await runShard(plan, { startAt: Date.now() + 20, onFrame: () => {} });
    expect(outcome.totals.opened).toBe(3);
    expect(countBy(target.remotes)).toEqual({ "127.0.0.1": 3 });
  });

  it("AGENT_SOURCE_ADDRESSES is read into the pool, and a bad value stops the agent naming the variable", () => {
    expect(loadEnv({ AGENT_SOURCE_ADDRESSES: "127.0.0.2-127.0.0.3,::1" }).AGENT_SOURCE_ADDRESSES).toEqual(["127.0.0.2", "127.0.0.3", "::1"]);
    expect(loadEnv({}).AGENT_SOURCE_ADDRESSES).toEqual([]);
    const lines: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk) => (lines.push(String(chunk)), true));
    vi.spyOn(process, "exit").mockImplementation((code) => {
      throw new Error(`exit ${code}`);
    });
    expect(() => loadEnv({ AGENT_SOURCE_ADDRESSES: "127.0.0.2-localhost" })).toThrow("exit 1");
    expect(lines).toEqual([
      expect.stringMatching(
        /^invalid environment variable AGENT_SOURCE_ADDRESSES="127.0.0.2-localhost": .*not a range of two IPv4 or two IPv6 addresses; e\.g\. 127\.0\.0\.2-127\.0\.0\.9/,
      ),
    ]);
  });
});
