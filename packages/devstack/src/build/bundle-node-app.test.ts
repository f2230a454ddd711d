import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { bundleNodeApp } from "./bundle-node-app";

describe("bundleNodeApp with splitting", () => {
  it("puts a dynamic import in a chunk of its own, loaded only when imported, and removes an earlier build's chunks", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "volley-bundle-split-"));
    writeFileSync(path.join(dir, "heavy.ts"), `export const heavy = "${"x".repeat(20_000)}";\n`);
    writeFileSync(
      path.join(dir, "main.ts"),
      'if (process.argv[2] === "heavy") { const { heavy } = await import("./heavy"); console.log(heavy.length); } else console.log("light");\n',
    );
    const out = path.join(dir, "dist");
    const outfile = path.join(out, "app.mjs");
    await bundleNodeApp({ entry: path.join(dir, "main.ts"), outfile, splitting: true });
    const first = readdirSync(out).sort();
    expect(first).toContain("app.mjs");
    const chunks = first.filter((f) => f !== "app.mjs");
    expect(chunks).toHaveLength(1);
    expect(chunks[0]).toMatch(/^app-[A-Z0-9]+\.mjs$/);
    // The entry does not hold the lazily imported module's text; the chunk does.
    expect(readFileSync(outfile, "utf8")).not.toContain("x".repeat(1000));
    expect(readFileSync(path.join(out, chunks[0]!), "utf8")).toContain("x".repeat(1000));
    expect(execFileSync(process.execPath, [outfile], { encoding: "utf8" }).trim()).toBe("light");
    expect(execFileSync(process.execPath, [outfile, "heavy"], { encoding: "utf8" }).trim()).toBe("20000");

    // Rebuilt with other content: the old chunk (another hash) is gone, not left beside the new one.
    writeFileSync(path.join(dir, "heavy.ts"), `export const heavy = "${"y".repeat(30_000)}";\n`);
    await bundleNodeApp({ entry: path.join(dir, "main.ts"), outfile, splitting: true });
    const second = readdirSync(out).filter((f) => f !== "app.mjs");
    expect(second).toHaveLength(1);
    expect(second[0]).not.toBe(chunks[0]);
    expect(execFileSync(process.execPath, [outfile, "heavy"], { encoding: "utf8" }).trim()).toBe("30000");
  });
});
