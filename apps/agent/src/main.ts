/**
 * Entry point. No arguments (or `daemon`) keeps the hub daemon exactly as before — npm start and the
 * e2e tests start it that way; anything else is the standalone CLI (`run plan.yaml`, `--help`).
 * Each mode is imported lazily so the CLI never reads the hub's environment and vice versa.
 */
export {}; // a module, so top-level await is allowed

const args = process.argv.slice(2);
if (args.length === 0 || (args.length === 1 && args[0] === "daemon")) {
  await import("./daemon");
} else {
  const { runCli } = await import("./cli/main");
  const code = await runCli(args);
  // Exit explicitly: a target that never answers our close frame must not keep the CLI alive.
  process.stdout.write("", () => process.exit(code));
}
