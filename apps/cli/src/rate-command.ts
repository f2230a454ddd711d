import type { RateChangeBody } from "@volley/contracts";
import { VolleyApi } from "./api-client";
import { readEnv } from "./env";
import { EXIT, UsageError, type CliIo, type ExitCode } from "./io";

export interface RateOptions {
  scale?: string;
  json?: boolean;
}

/** A positive number from a flag or argument, or a UsageError naming it and the fix. */
function positive(name: string, text: string, example: string): number {
  const n = Number(text);
  if (text.trim() === "" || !Number.isFinite(n) || n <= 0) throw new UsageError(`${name} must be a number above 0, like ${example} (got "${text}")`);
  return n;
}

/**
 * `volley rate <run-id> <rate>` or `volley rate <run-id> --scale 2`: changes a running run's rate
 * (users: arrival rate), as the run page's live control does; every agent applies it a second later.
 */
export async function rateCommand(runId: string, rate: string | undefined, opts: RateOptions, io: CliIo): Promise<ExitCode> {
  if ((rate === undefined) === (opts.scale === undefined))
    throw new UsageError("give the new rate (volley rate <run-id> 40, in the plan's unit) or --scale (volley rate <run-id> --scale 2), not both");
  const body: RateChangeBody = rate !== undefined ? { rate: positive("<rate>", rate, "40") } : { scale: positive("--scale", opts.scale!, "2 or 0.5") };
  const api = new VolleyApi(readEnv(io.env));
  const answer = await api.changeRate(runId, body);
  if (opts.json) {
    io.stdout(`${JSON.stringify(answer)}\n`);
    return EXIT.passed;
  }
  const { change } = answer;
  const inS = Math.max(0, Math.round((change.at - Date.now()) / 100) / 10);
  io.stdout(
    `run ${runId}: rate → ${change.rate} ${change.unit} (×${Math.round(change.scale * 1000) / 1000} the plan's) from ${new Date(change.at).toISOString()} (in ${inS} s)\n`,
  );
  return EXIT.passed;
}
