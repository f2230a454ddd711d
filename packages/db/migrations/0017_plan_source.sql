ALTER TABLE "plan_versions" ADD COLUMN "source" text;--> statement-breakpoint
ALTER TABLE "plans" ADD COLUMN "source" text;