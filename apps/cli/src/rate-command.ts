import type { RateChangeBody } from "@volley/contracts";
import { VolleyApi } from "./api-client";
import { readEnv } from "./env";
import { EXIT, UsageError, type CliIo, type ExitCode } from "./io";

export interface RateOptions {
  scale?: string;
  connections?: string;
  json?: boolean;
}

/** A positive number from a flag or argument, or a UsageError naming it and the fix. */
function positive(name: string, text: string, example: string): number {
  const n = Number(text);
  if (text.trim() === "" || !Number.isFinite(n) || n <= 0) throw new UsageError(`${name} must be a number above 0, like ${example} (got "${text}")`);
  return n;
}

/**
 * `volley rate <run-id> <rate>`, `--scale 2` or `--connections 200`: changes a running run's rate
 * (users: arrival rate) or its connections, as the run page's live control does; every agent applies
 * it a second later.
 */
export async function rateCommand(runId: string, rate: string | undefined, opts: RateOptions, io: CliIo): Promise<ExitCode> {
  const given = [rate, opts.scale, opts.connections].filter((v) => v !== undefined).length;
  if (given !== 1)
    throw new UsageError(
      "give one of: the new rate (volley rate <run-id> 40, in the plan's unit), --scale (volley rate <run-id> --scale 2) or --connections (volley rate <run-id> --connections 200)",
    );
  let body: RateChangeBody;
  if (rate !== undefined) body = { rate: positive("<rate>", rate, "40") };
  else if (opts.scale !== undefined) body = { scale: positive("--scale", opts.scale, "2 or 0.5") };
  else {
    const connections = positive("--connections", opts.connections!, "200");
    if (!Number.isInteger(connections)) throw new UsageError(`--connections must be a whole number, like 200 (got "${opts.connections}")`);
    body = { connections };
  }
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
