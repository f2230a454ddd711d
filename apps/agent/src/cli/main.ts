import { Command, CommanderError, InvalidArgumentError } from "commander";
import { parseSourceAddresses } from "../engine/source-addresses";
import { AGENT_VERSION } from "../version";
import { defaultWorkers } from "../workers/default-workers";
import { EXIT, runCommand } from "./run-command";

/**
 * The standalone CLI. Returns the exit code rather than exiting, so main.ts owns the process.
 * Usage errors (unknown flag, missing file) exit 2 like any other bad input.
 */
export async function runCli(args: readonly string[]): Promise<number> {
  let code: number = EXIT.passed;
  const program = new Command()
    .name("volley-agent")
    .description(
      "Volley load-test agent. With no arguments (or `daemon`) it runs as a hub daemon (HUB_URL, AGENT_TOKEN); `check` tries the hub once and says whether it admits this agent (exit 0, 2 refused, 3 no answer, 4 clock far off); `run` runs a plan on its own.",
    )
    .version(AGENT_VERSION)
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s), writeOut: (s) => process.stdout.write(s) });

  program
    .command("run")
    .description("run a plan (YAML or JSON) on this machine, without a hub")
    .argument("<plan>", "plan file")
    .option("--json", "print only the summary JSON (the API's `summary`) to stdout")
    .option("--out <file>", "also write the summary JSON to this file")
    .option("--frames <file>", "write every 1 s interval frame as a JSON line: counters and HdrHistograms (µs, compressed base64) per metric")
    .option(
      "--source-addresses <list>",
      "local addresses to connect from, round-robin, e.g. 127.0.0.2-127.0.0.9 (each gives ~28K more connections to one target)",
      sourceAddressesArg,
    )
    .option(
      "--workers <n>",
      "engine worker threads the plan is split across (default: one per core this process may use); 0 runs it on the main thread",
      workersArg,
      defaultWorkers(),
    )
    .addHelpText("after", "\nExit codes: 0 passed, 1 thresholds failed, 2 errored or bad input, 130 aborted (Ctrl-C).")
    .action(async (file: string, opts: { json?: boolean; out?: string; frames?: string; sourceAddresses?: string[]; workers: number }) => {
      const controller = new AbortController();
      let interrupts = 0;
      const onSigint = () => {
        // First Ctrl-C stops the run cleanly and prints what was measured; a second one quits at once.
        if (++interrupts > 1) process.exit(EXIT.aborted);
        process.stderr.write("\ninterrupted: stopping, summarizing what was measured (Ctrl-C again to quit now)\n");
        controller.abort("interrupted by Ctrl-C");
      };
      process.on("SIGINT", onSigint);
      process.on("SIGTERM", onSigint);
      try {
        code = await runCommand(file, opts, {
          stdout: (text) => process.stdout.write(text),
          stderr: { write: (text) => process.stderr.write(text), isTTY: process.stderr.isTTY === true },
          signal: controller.signal,
        });
      } finally {
        process.off("SIGINT", onSigint);
        process.off("SIGTERM", onSigint);
      }
    });

  try {
    await program.parseAsync([...args], { from: "user" });
  } catch (e) {
    if (e instanceof CommanderError) {
      // --help and --version end this way too, successfully.
      return e.exitCode === 0 ? EXIT.passed : EXIT.errored;
    }
    throw e;
  }
  return code;
}

/** Commander reports this as `option '--source-addresses <list>' argument '…' is invalid. <why>` and we exit 2. */
function sourceAddressesArg(value: string): string[] {
  const parsed = parseSourceAddresses(value);
  if (!parsed.ok) throw new InvalidArgumentError(parsed.error);
  return parsed.addresses;
}

function workersArg(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n > 1024)
    throw new InvalidArgumentError("give a whole number of threads from 0 to 1024, e.g. 4 (0 runs the engine on the main thread)");
  return n;
}
