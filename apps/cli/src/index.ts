/** The CLI as a library: run it in-process, or build its JUnit report from a run. */
export { runCli } from "./cli";
export { EXIT, type CliIo, type ExitCode } from "./io";
export { runToJunit } from "./junit";
