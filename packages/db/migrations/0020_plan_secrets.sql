-- Plans' target credentials move out of the plan columns into a sealed `secrets` column per row
-- (packages/db plan-secrets-box.ts). Sealing needs VOLLEY_SECRETS_KEY, which SQL has not: rows from
-- before this migration keep secrets null, and the hub seals them (and re-seals rows under an old
-- key) once at its start, in sealStoredPlans.
ALTER TABLE "plan_versions" ADD COLUMN "secrets" text;--> statement-breakpoint
ALTER TABLE "plans" ADD COLUMN "secrets" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "secrets" text;--> statement-breakpoint
ALTER TABLE "shards" ADD COLUMN "secrets" text;