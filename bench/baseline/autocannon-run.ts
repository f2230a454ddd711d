/**
 * autocannon (8.0.0, installed once into the gitignored bench/.tools/ by lib/autocannon.ts) driven
 * through its JavaScript API, so its CPU is measured over the run alone, as the agent measures its
 * own (process.cpuUsage() from just before the first request to the end): start-up excluded on
 * both sides. Prints one JSON line: requests answered, non-2xx, errors, CPU seconds, requests/s.
 *
 *   node --import tsx bench/baseline/autocannon-run.ts <autocannon dir> <url> <connections> <overall rate, 0: flat out> <amount>
 */
import { createRequire } from "node:module";
import path from "node:path";

const [dir, url, conns, rate, amount] = process.argv.slice(2);
if (!dir || !url || !conns || !rate || !amount) throw new Error("usage: autocannon-run.ts <autocannon dir> <url> <connections> <overall rate> <amount>");
const require = createRequire(path.resolve(dir, "package.json"));
const autocannon = require("autocannon") as (
  opts: Record<string, unknown>,
) => Promise<{ requests: { total: number }; non2xx: number; errors: number; duration: number }>;

const before = process.cpuUsage();
const started = performance.now();
const r = await autocannon({ url, connections: Number(conns), amount: Number(amount), ...(Number(rate) > 0 ? { overallRate: Number(rate) } : {}) });
const cpu = process.cpuUsage(before);
const seconds = (performance.now() - started) / 1000;
const answered = r.requests.total;
console.log(
  JSON.stringify({ received: answered, non2xx: r.non2xx, errors: r.errors, cpuSeconds: (cpu.user + cpu.system) / 1e6, seconds, rps: answered / seconds }),
);
