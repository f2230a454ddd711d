import { Command, CommanderError, Option } from "commander";
import { ApiRequestError, UnreachableError } from "./api-client";
import { DEFAULT_VOLLEY_URL, EnvError } from "./env";
import { EXIT, UsageError, type CliIo, type ExitCode } from "./io";
import { rateCommand, type RateOptions } from "./rate-command";
import { DEFAULT_TIMEOUT, runCommand, type RunOptions } from "./run-command";
import { validateCommand } from "./validate-command";
import { importCommand, type ImportOptions } from "./import-command";
import { CLI_VERSION } from "./version";

const EXIT_HELP = `
Environment:
  VOLLEY_URL    the Volley web app (default ${DEFAULT_VOLLEY_URL})
  VOLLEY_TOKEN  API token from the web UI (Settings → API tokens), sent as Authorization: Bearer <token>

Exit codes: 0 passed, 1 thresholds failed, 2 errored/aborted/degraded (an agent was lost)/inconclusive (nothing could be judged, like a capacity search whose first step the agent limited), bad input, server unreachable or timeout.`;

/** The one line printed for an error we expected; anything else is a bug and keeps its stack. */
function describeError(err: unknown): string | null {
  if (err instanceof ApiRequestError) return `Volley answered ${err.status} ${err.code}: ${err.message}`;
  if (err instanceof UnreachableError || err instanceof UsageError || err instanceof EnvError) return err.message;
  return null;
}

/** Runs the CLI with these arguments and returns the exit code (main.ts owns the process). */
export async function runCli(args: readonly string[], io: CliIo): Promise<ExitCode> {
  let code: ExitCode = EXIT.passed;
  const program = new Command()
    .name("volley")
    .description("Validate Volley test plans and run them on a Volley server, from a terminal or CI.")
    .version(CLI_VERSION)
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .addHelpText("after", EXIT_HELP);

  program
    .command("validate")
    .description("check a plan file (YAML or JSON) locally, without a server")
    .argument("<plan>", "plan file")
    .action(async (file: string) => {
      code = await validateCommand(file, io);
    });

  program
    .command("run")
    .description("queue a plan on the Volley server at VOLLEY_URL; with --wait, follow it to the end")
    .argument("<plan>", "plan file")
    .option("--wait", "wait for the run to end; the exit code then says whether it passed")
    .option("--junit <file>", "with --wait: write a JUnit XML report (one testcase per threshold)")
    .option("--json", "print only JSON to stdout: the run (with --wait) or {id, url}")
    .addOption(
      new Option("--timeout <duration>", "with --wait: abort the run and exit 2 if it has not ended by then").default(
        undefined,
        `the plan's own length + ${DEFAULT_TIMEOUT}`,
      ),
    )
    .addHelpText("after", EXIT_HELP)
    .action(async (file: string, opts: RunOptions) => {
      code = await runCommand(file, opts, io);
    });

  program
    .command("rate")
    .description("change a running run's rate (users: arrival rate) or connections from a second from now, like the run page's live control")
    .argument("<run-id>", "the run, like run_abc123 (volley run prints it)")
    .argument("[rate]", "the new rate in the plan's unit: scenario.message.rate, or arrivalRate for users")
    .option("--scale <factor>", "instead of a rate: the plan's rates times this (2 doubles them, 1 goes back to the plan's)")
    .option("--connections <count>", "instead of a rate: how many connections are open at once, over every agent")
    .option("--json", "print the answer as JSON: the change and every change of the run so far")
    .action(async (runId: string, rate: string | undefined, opts: RateOptions) => {
      code = await rateCommand(runId, rate, opts, io);
    });

  const imports = program
    .command("import")
    .description("turn a browser recording or an Artillery script into a plan (YAML on stdout, what to check on stderr)");
  const collect = (value: string, previous: string[] = []) => [...previous, value];
  imports
    .command("har")
    .description("a HAR saved from the browser's DevTools (Network panel, Preserve log, with WebSocket messages)")
    .argument("<file>", "HAR file")
    .option("--target <url>", "point the plan at this server instead of the recorded one")
    .option("--origin <recorded=new>", "send the requests recorded on another origin (a login service) to this origin instead (repeatable)", collect)
    .action(async (file: string, opts: ImportOptions) => {
      code = await importCommand("har", file, opts, io);
    });
  imports
    .command("artillery")
    .description("an Artillery script whose scenario uses the ws or socketio engine")
    .argument("<file>", "Artillery YAML script")
    .option("--payload <name=path>", "a config.payload CSV file: its name in the script = where it is (repeatable)", collect)
    .option("--target <url>", "point the plan at this server instead of config.target")
    .action(async (file: string, opts: ImportOptions) => {
      code = await importCommand("artillery", file, opts, io);
    });

  try {
    await program.parseAsync([...args], { from: "user" });
  } catch (err) {
    // Commander has already printed its one-line message (unknown flag, missing argument).
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.passed : EXIT.error;
    const line = describeError(err);
    if (line === null) throw err;
    io.stderr(`error: ${line}\n`);
    return EXIT.error;
  }
  return code;
}
