import { describePlan } from "./format";
import { EXIT, type CliIo, type ExitCode } from "./io";
import { formatIssues, readPlanFile } from "./plan-file";

/** `volley validate plan.yaml`: checks the plan locally, with the same schema the server uses. */
export async function validateCommand(file: string, io: CliIo): Promise<ExitCode> {
  const result = await readPlanFile(file);
  if (!result.ok) {
    io.stderr(formatIssues(file, result.issues));
    return EXIT.error;
  }
  io.stdout(`${file} is valid: ${describePlan(result.plan)}\n`);
  return EXIT.passed;
}
