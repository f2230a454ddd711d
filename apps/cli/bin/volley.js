#!/usr/bin/env node
// The CLI is TypeScript run through tsx; registering it here keeps the bin a plain node script,
// so `npx volley validate plan.yaml` works from the repo with no build step.
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  // Answered before tsx loads (~2 s at every start): the version is the package's, as the CLI prints it.
  const { readFileSync } = await import("node:fs");
  process.stdout.write(`${JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version}\n`);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../src/main.ts");
}
