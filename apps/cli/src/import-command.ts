import { readFile } from "node:fs/promises";
import path from "node:path";
import { importArtillery, importHar, PlanImportError, planToYaml, type ImportResult } from "@volley/plan-import";
import { EXIT, UsageError, type CliIo, type ExitCode } from "./io";

export interface ImportOptions {
  /** Artillery payload files: name=path, repeatable. */
  payload?: string[];
  /** Point the plan at this server instead of the recorded one. */
  target?: string;
  /** HAR requests on another origin: recorded=new, repeatable. */
  origin?: string[];
}

/** `--origin http://auth.example.com=http://127.0.0.1:8081` pairs, each side an http(s) origin. */
function parseOrigins(specs: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const spec of specs) {
    const eq = spec.indexOf("=");
    const [from, to] = eq <= 0 ? [undefined, undefined] : [spec.slice(0, eq), spec.slice(eq + 1)];
    const origin = (u: string | undefined) => (u !== undefined && URL.canParse(u) && /^https?:$/.test(new URL(u).protocol) ? new URL(u).origin : undefined);
    if (origin(from) === undefined || origin(to) === undefined)
      throw new UsageError(
        `--origin ${spec}: write it as recorded=new, each an http(s) origin, like --origin https://auth.example.com=http://127.0.0.1:8081 (the recorded one as the import's notes name it)`,
      );
    out[origin(from)!] = origin(to)!;
  }
  return out;
}

async function readText(file: string, what: string): Promise<string> {
  try {
    return await readFile(file, "utf8");
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    const why =
      code === "ENOENT"
        ? "no such file"
        : code === "EISDIR"
          ? "it is a directory"
          : code === "EACCES"
            ? "permission denied"
            : String((err as Error).message ?? err);
    throw new UsageError(`cannot read ${what} ${file}: ${why}`);
  }
}

/**
 * `volley import har <file>` and `volley import artillery <file> [--payload users.csv=./data/users.csv]`:
 * prints the plan as YAML on stdout (redirect it to a file) and what to check on stderr.
 */
export async function importCommand(format: "har" | "artillery", file: string, opts: ImportOptions, io: CliIo): Promise<ExitCode> {
  const text = await readText(file, format === "har" ? "HAR file" : "Artillery script");
  const files: Record<string, string> = {};
  for (const spec of opts.payload ?? []) {
    const eq = spec.indexOf("=");
    if (eq <= 0)
      throw new UsageError(`--payload ${spec}: write it as name=path, like --payload users.csv=./data/users.csv (name as config.payload.path gives it)`);
    files[spec.slice(0, eq)] = await readText(spec.slice(eq + 1), "payload file");
  }
  const options = {
    ...(opts.target !== undefined ? { targetUrl: opts.target } : {}),
    ...(opts.origin !== undefined ? { origins: parseOrigins(opts.origin) } : {}),
    name: `Imported from ${path.basename(file)}`,
  };
  let result: ImportResult;
  try {
    result = format === "har" ? importHar(text, options) : importArtillery(text, { ...options, files });
  } catch (err) {
    if (err instanceof PlanImportError) throw new UsageError(`${file}: ${err.message}`);
    throw err;
  }
  io.stdout(planToYaml(result.plan));
  if (result.notes.length > 0) io.stderr(`${["Check before running:", ...result.notes.map((n) => `  - ${n}`)].join("\n")}\n`);
  return EXIT.passed;
}
