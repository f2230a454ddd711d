import { z } from "zod";

/**
 * Every error code the API answers with, its HTTP status and what it means. The handler wrapper
 * (web's ApiError) accepts only these codes, each with its own status, and the OpenAPI document
 * lists them from here, so a new code is documented the moment it exists.
 */
export const API_ERROR_CODES = {
  invalid_json: { status: 400, description: "the body is empty or not valid JSON; the message says what was wrong" },
  invalid_body: { status: 400, description: "the body does not match the schema; `issues` names every bad field" },
  invalid_query: { status: 400, description: "a query parameter is unknown or invalid (or `cursor` names no item of the list); `issues` names it" },
  unauthenticated: { status: 401, description: "no credentials, or the API token is unknown or revoked; send `Authorization: Bearer <token>`" },
  forbidden: { status: 403, description: "the API token lacks the scope (`read` or `run`), or the signed-in member's role is too low" },
  target_refused: {
    status: 403,
    description:
      "the plan's target (or a URL its flow calls) is outside what this server may load: not on the allowlist, or not public in hosted mode; `issues` names the field",
  },
  target_unverified: {
    status: 403,
    description:
      "hosted mode: the target's host is not a verified target of the organization, or its ownership proof is gone; the message says how to prove it",
  },
  quota_exceeded: {
    status: 403,
    description: "the plan (with the runs already going) exceeds the organization's or owner's quotas; the message names each limit",
  },
  not_found: { status: 404, description: "it does not exist in your organization" },
  conflict: {
    status: 409,
    description: "the current state forbids it (the run has already ended; the agent is busy or connected); the message says what to do",
  },
  not_enough_agents: { status: 409, description: "the plan asks for more agents than its pool has connected; the message names the pool and the fix" },
  payload_too_large: {
    status: 413,
    description: "the body is larger than the server's limit (`VOLLEY_MAX_BODY_BYTES`, 1 MiB by default); the message names it",
  },
  rate_limited: { status: 429, description: "too many requests for this credential (or failed sign-ins for an account); `Retry-After` says when to try again" },
  misconfigured: { status: 500, description: "a server variable is missing or wrong; the message names it and how to fix it" },
  internal: { status: 500, description: "an unexpected error; it has been logged with the request id" },
  unavailable: {
    status: 503,
    description: "a backing service (PostgreSQL, Redis, or the agent package build) is unreachable or not answering; the message names it",
  },
} as const satisfies Record<string, { status: number; description: string }>;

export type ApiErrorCode = keyof typeof API_ERROR_CODES;
/** The HTTP status that goes with `code`. */
export type ApiErrorStatus<C extends ApiErrorCode = ApiErrorCode> = (typeof API_ERROR_CODES)[C]["status"];
export const apiErrorCodeSchema = z.enum(Object.keys(API_ERROR_CODES) as [ApiErrorCode, ...ApiErrorCode[]]);

const issueSchema = z.object({ path: z.string(), message: z.string() });

/** The one error shape of every API response and every CLI --json failure. */
export const apiErrorSchema = z.object({
  error: z.object({
    code: apiErrorCodeSchema,
    message: z.string(),
    issues: z.array(issueSchema).optional(),
  }),
});
export type ApiError = z.infer<typeof apiErrorSchema>;

/**
 * What clients accept as an error body: the same shape with any code, so a newer server's new code
 * still reaches the user with its message instead of reading as "not a Volley server".
 */
export const receivedApiErrorSchema = z.object({ error: apiErrorSchema.shape.error.extend({ code: z.string() }) });

export interface FieldIssue {
  path: string;
  message: string;
}

/** Flattens zod issues into "field.path: message" items a person can act on. */
export function fieldIssues(error: z.ZodError, prefix = ""): FieldIssue[] {
  return error.issues.map((issue) => {
    const path = [prefix, ...issue.path.map(String)].filter((p) => p !== "").join(".");
    return { path: path || "(root)", message: issue.message };
  });
}

export function describeIssues(issues: FieldIssue[]): string {
  return issues.map((i) => `${i.path}: ${i.message}`).join("; ");
}
