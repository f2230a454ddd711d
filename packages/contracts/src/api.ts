import { z } from "zod";
import { MAX_PLAN_BYTES, planSchema } from "./plan";
import { runFilterFields } from "./run-meta";

/** Bodies and answers of the REST API beyond runs (tokens, plans); the OpenAPI document is generated from these. */

export const API_TOKEN_SCOPES = ["read", "run"] as const;
export const apiTokenScopeSchema = z.enum(API_TOKEN_SCOPES);

export const createApiTokenBodySchema = z.strictObject({
  name: z.string().trim().min(1, 'give the token a name, like "ci"').max(100),
  scopes: z
    .array(apiTokenScopeSchema)
    .min(1, 'pick at least one scope: "read" (read runs and plans) and/or "run" (start and stop runs, save plans)')
    .default(["read", "run"]),
});
export type CreateApiTokenBody = z.infer<typeof createApiTokenBodySchema>;

export const apiTokenSchema = z.object({
  id: z.string(),
  name: z.string(),
  scopes: z.array(apiTokenScopeSchema),
  /** The first characters of the secret, to tell tokens apart. */
  prefix: z.string(),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
});
export type ApiToken = z.infer<typeof apiTokenSchema>;

export const createApiTokenResponseSchema = z.object({
  token: apiTokenSchema,
  /** The secret: shown this once, never again. Send it as `Authorization: Bearer <secret>`. */
  secret: z.string(),
});

/**
 * POST /api/v1/plans, PUT /api/v1/plans/{id}: the plan as JSON, or as YAML text. YAML is kept as
 * written (comments, key order, no defaults) beside the validated plan, which is what runs.
 */
export const savePlanBodySchema = z
  .strictObject({
    plan: planSchema.optional(),
    yaml: z.string().max(MAX_PLAN_BYTES, `must be at most ${MAX_PLAN_BYTES} characters (512 KiB) — shorten the plan`).optional(),
  })
  .superRefine((body, ctx) => {
    if ((body.plan === undefined) === (body.yaml === undefined)) {
      ctx.addIssue({
        code: "custom",
        path: ["plan"],
        message: 'send exactly one of "plan" (the plan as JSON) or "yaml" (the plan as YAML text, kept as written)',
      });
    }
  });
export type SavePlanBody = z.infer<typeof savePlanBodySchema>;

/** The plan as its author wrote it; null when it was saved as JSON (or before plans kept their text). */
const planYamlField = z.string().nullable();

export const planRecordSchema = z.object({
  id: z.string(),
  name: z.string(),
  version: z.number().int(),
  plan: planSchema,
  yaml: planYamlField,
  createdAt: z.string(),
  updatedAt: z.string(),
  tags: z.array(z.string()),
  notes: z.string(),
  /** The run this plan's later runs are compared with (PUT /api/v1/plans/{id}/baseline); null when none is set. */
  baselineRunId: z.string().nullable(),
});
export type PlanRecord = z.infer<typeof planRecordSchema>;

export const planVersionSchema = z.object({
  version: z.number().int(),
  name: z.string(),
  plan: planSchema,
  yaml: planYamlField,
  createdAt: z.string(),
});
export type PlanVersion = z.infer<typeof planVersionSchema>;

/**
 * POST /api/v1/plans/import: a browser recording (a HAR saved from DevTools, with its WebSocket
 * messages) or an Artillery script (ws or socketio engine) to turn into a plan.
 */
export const importPlanBodySchema = z.strictObject({
  format: z.enum(["har", "artillery"], { error: 'use "har" (a HAR saved from the browser\'s DevTools) or "artillery" (an Artillery script)' }),
  /** The HAR's JSON text, or the Artillery YAML. */
  content: z.string().min(1, "is empty: send the HAR's JSON text or the Artillery script's YAML"),
  /** Artillery payload files (config.payload.path, or its base name) → their CSV text. */
  files: z
    .record(z.string().min(1).max(200), z.string())
    .refine((f) => Object.keys(f).length <= 20, "at most 20 files")
    .optional(),
  /** Point the plan at this server instead of the recorded one (its origin; its path when it has one). */
  targetUrl: z.url({ protocol: /^(wss?|https?)$/, error: "must be an absolute ws://, wss://, http:// or https:// URL" }).optional(),
  /** HAR requests recorded on another origin than the socket (a login service): recorded origin → the origin to send them to. */
  origins: z
    .record(
      z.url({ protocol: /^https?$/, error: "each key must be a recorded http:// or https:// origin, as the import's notes name it" }),
      z.url({ protocol: /^https?$/, error: "must be an http:// or https:// origin to send the recorded requests to" }),
    )
    .refine((o) => Object.keys(o).length <= 20, "at most 20 origins")
    .optional(),
});
export type ImportPlanBody = z.infer<typeof importPlanBodySchema>;

export const importPlanResponseSchema = z.object({
  /** The plan as YAML, to review and edit before saving or running. */
  plan: z.string(),
  /** What the import guessed or left out, and what to adjust. */
  notes: z.array(z.string()),
});
export type ImportPlanResponse = z.infer<typeof importPlanResponseSchema>;

/** POST /api/v1/runs: an inline plan, or the id of a saved plan (its latest version runs). */
export const startRunBodySchema = z.strictObject({ plan: planSchema.optional(), planId: z.string().min(1).optional() }).superRefine((body, ctx) => {
  if ((body.plan === undefined) === (body.planId === undefined)) {
    ctx.addIssue({ code: "custom", path: ["plan"], message: 'send exactly one of "plan" (a plan document) or "planId" (a saved plan\'s id)' });
  }
});
export type StartRunBody = z.infer<typeof startRunBodySchema>;

/**
 * The most a list page (GET /api/v1/plans) carries, as JSON: a page ends at `limit` items or at
 * this size, whichever comes first (the first item always fits; a plan is at most MAX_PLAN_BYTES),
 * and `next` then names where the following page starts.
 */
export const LIST_PAGE_MAX_BYTES = 1_048_576;

const LIMIT_FIX = "must be a whole number from 1 to 500";
const pageFields = {
  limit: z.coerce.number(LIMIT_FIX).int(LIMIT_FIX).min(1, LIMIT_FIX).max(500, LIMIT_FIX).default(50),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
  /** The `next` of the previous page: this page starts after it. */
  cursor: z.string().min(1).max(100).optional(),
};
const cursorOrOffset = (q: { offset: number; cursor?: string }, ctx: z.RefinementCtx) => {
  if (q.cursor !== undefined && q.offset !== 0)
    ctx.addIssue({ code: "custom", path: ["offset"], message: "send cursor (the previous page's next) or offset, not both" });
};

/** GET /api/v1/runs query: paging, and the filters of run-meta.ts (status, plan, search, tag, dates). */
export const listRunsQuerySchema = z
  .strictObject({
    ...pageFields,
    ...runFilterFields,
  })
  .superRefine(cursorOrOffset);
export type ListRunsQuery = z.infer<typeof listRunsQuerySchema>;

/** GET /api/v1/plans query. */
export const listPlansQuerySchema = z.strictObject(pageFields).superRefine(cursorOrOffset);

/** GET /api/v1/audit query. */
export const pageQuerySchema = z.strictObject({ limit: pageFields.limit, offset: pageFields.offset });
