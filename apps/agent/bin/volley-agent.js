#!/usr/bin/env node
// The agent is TypeScript run through tsx, as `npm start` does; registering it here keeps the
// bin a plain node script, so `npx volley-agent run plan.yaml` needs no build step.
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
