import { z } from "zod";

/**
 * The only reader of process.env in the CLI. Read when a command needs the server (validate never
 * does), so a bad VOLLEY_URL cannot break `volley validate`.
 */

export const DEFAULT_VOLLEY_URL = "http://localhost:3000";

/** A variable is set to something unusable; the message names it and says what it should be. */
export class EnvError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "EnvError";
  }
}

export interface CliEnv {
  /** Base URL of the Volley web app, without a trailing slash. */
  url: string;
  /** API token sent as `Authorization: Bearer …`; the server answers 401 without one (the message says to set it). */
  token: string | undefined;
}

const blankToUndefined = (v: unknown) => (typeof v === "string" && v.trim() === "" ? undefined : typeof v === "string" ? v.trim() : v);

const envSchema = z.object({
  VOLLEY_URL: z.preprocess(
    blankToUndefined,
    z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL such as https://volley.example.com" }).default(DEFAULT_VOLLEY_URL),
  ),
  VOLLEY_TOKEN: z.preprocess(blankToUndefined, z.string().optional()),
});

export function readEnv(source: Record<string, string | undefined> = process.env): CliEnv {
  const parsed = envSchema.safeParse({ VOLLEY_URL: source.VOLLEY_URL, VOLLEY_TOKEN: source.VOLLEY_TOKEN });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = String(issue?.path[0] ?? "VOLLEY_URL");
    throw new EnvError(`${name}=${JSON.stringify(source[name] ?? "")} ${issue?.message ?? "is invalid"}`);
  }
  return { url: parsed.data.VOLLEY_URL.replace(/\/+$/, ""), token: parsed.data.VOLLEY_TOKEN };
}
