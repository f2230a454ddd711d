import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runBin } from "./test-support";

/**
 * The README, run as written from a fresh checkout's root: every plan its commands name exists,
 * and each `npx volley validate <plan>` of its CLI section prints exactly the `# → …` line under
 * it. It once named a plans/smoke.yaml no checkout has.
 */
const ROOT = path.resolve(import.meta.dirname, "../../..");
const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");
const section = /\n## CLI\n([\s\S]*?)(?=\n## |$)/.exec(readme)?.[1] ?? "";

describe("the README's CLI section", () => {
  it("names only plans this repository has (the agent's `volley-agent run` lines too)", () => {
    const plans = [...readme.matchAll(/npx volley(?:-agent)? (?:validate|run) (\S+\.(?:ya?ml|json))\b/g)].map((m) => m[1]!);
    expect(plans.length).toBeGreaterThanOrEqual(7);
    for (const plan of plans) expect(existsSync(path.join(ROOT, plan)), `${plan} (README)`).toBe(true);
  });

  it("prints what it says `volley validate` prints", async () => {
    const examples = [...section.matchAll(/^npx volley (validate \S+)\n# → (.+)$/gm)].map((m) => ({ args: m[1]!.split(" "), printed: m[2]! }));
    expect(examples).not.toHaveLength(0);
    for (const { args, printed } of examples) {
      const r = await runBin(args, {}, ROOT);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(`${printed}\n`);
    }
  });
});
