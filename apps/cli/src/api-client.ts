import {
  receivedApiErrorSchema,
  createRunResponseSchema,
  rateChangeResponseSchema,
  runSchema,
  type Plan,
  type RateChangeBody,
  type RateChangeResponse,
  type Run,
} from "@volley/contracts";
import type { z } from "zod";
import type { CliEnv } from "./env";

/** The server answered with an error; the message is the server's own `{error:{code,message}}`. */
export class ApiRequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "ApiRequestError";
  }
}

/** Nothing answered at VOLLEY_URL (refused, DNS, timeout): the server is not running or the URL is wrong. */
export class UnreachableError extends Error {
  constructor(url: string, reason: string) {
    super(`cannot reach Volley at ${url}: ${reason} — is it running? set VOLLEY_URL`);
    this.name = "UnreachableError";
  }
}

/** Each request gets this long; a hung server must not hang a CI job between polls. */
const REQUEST_TIMEOUT_MS = 30_000;

/** The innermost cause's code or message: fetch reports "fetch failed" and hides ECONNREFUSED in `cause`. */
function reasonOf(err: unknown): string {
  let e: unknown = err;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  if (e instanceof AggregateError && e.errors[0]) e = e.errors[0];
  if (e instanceof Error) {
    if (e.name === "TimeoutError") return `no answer within ${REQUEST_TIMEOUT_MS / 1000}s`;
    const code = (e as { code?: unknown }).code;
    return typeof code === "string" && !e.message.includes(code) ? `${code} ${e.message}` : e.message;
  }
  return String(e);
}

/** The slice of the REST API the CLI uses, with the one error shape turned into exceptions. */
export class VolleyApi {
  constructor(private readonly env: CliEnv) {}

  runUrl(id: string): string {
    return `${this.env.url}/runs/${encodeURIComponent(id)}`;
  }

  async createRun(plan: Plan): Promise<{ id: string }> {
    return this.request("POST", "/api/v1/runs", createRunResponseSchema, { plan });
  }

  async getRun(id: string): Promise<Run> {
    return this.request("GET", `/api/v1/runs/${encodeURIComponent(id)}`, runSchema);
  }

  async changeRate(id: string, body: RateChangeBody): Promise<RateChangeResponse> {
    return this.request("POST", `/api/v1/runs/${encodeURIComponent(id)}/rate`, rateChangeResponseSchema, body);
  }

  async abortRun(id: string): Promise<void> {
    await this.request("POST", `/api/v1/runs/${encodeURIComponent(id)}/abort`, null);
  }

  private async request<S extends z.ZodType>(method: string, path: string, schema: S | null, body?: unknown): Promise<z.output<S>> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (this.env.token) headers.authorization = `Bearer ${this.env.token}`;
    let res: Response;
    try {
      res = await fetch(`${this.env.url}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (err) {
      throw new UnreachableError(this.env.url, reasonOf(err));
    }
    const text = await res.text();
    let data: unknown;
    try {
      data = text === "" ? undefined : JSON.parse(text);
    } catch {
      data = undefined;
    }
    if (!res.ok) {
      const apiError = receivedApiErrorSchema.safeParse(data);
      if (apiError.success) {
        const { code, message } = apiError.data.error;
        // The server's fix speaks of HTTP headers; a CLI user sets a variable.
        if (res.status === 401) {
          const fix = this.env.token
            ? "VOLLEY_TOKEN was refused: create a new API token in the web UI (Settings → API tokens)"
            : "set VOLLEY_TOKEN to an API token from the web UI (Settings → API tokens)";
          throw new ApiRequestError(res.status, code, `${message} — ${fix}`);
        }
        throw new ApiRequestError(res.status, code, message);
      }
      // Not Volley's error shape: likely a proxy, or VOLLEY_URL points at another server.
      throw new ApiRequestError(
        res.status,
        "http_error",
        `${method} ${path} answered HTTP ${res.status} ${res.statusText} without a Volley error body — is VOLLEY_URL (${this.env.url}) a Volley server?`,
      );
    }
    if (schema === null) return undefined as z.output<S>;
    const parsed = schema.safeParse(data);
    if (!parsed.success) {
      throw new ApiRequestError(
        res.status,
        "unexpected_response",
        `${method} ${path} answered something that is not a Volley response — is VOLLEY_URL (${this.env.url}) a Volley server of a matching version?`,
      );
    }
    return parsed.data;
  }
}
