import { runCli } from "./cli";
import { EXIT } from "./io";

/** Entry point of the `volley` bin: wires the real process to runCli and exits with its code. */
const controller = new AbortController();
let interrupts = 0;
const onSignal = () => {
  // First Ctrl-C (or a CI cancel's SIGTERM) aborts the waited run on the server; a second quits now.
  if (++interrupts > 1) process.exit(EXIT.error);
  controller.abort();
};
process.on("SIGINT", onSignal);
process.on("SIGTERM", onSignal);

let code: number;
try {
  code = await runCli(process.argv.slice(2), {
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
    stderrIsTTY: process.stderr.isTTY === true,
    signal: controller.signal,
  });
} catch (err) {
  process.stderr.write(`volley: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  code = EXIT.error;
}
// Flush stdout before exiting: a piped --json document must arrive whole.
process.stdout.write("", () => process.exit(code));
