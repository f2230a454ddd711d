ALTER TABLE "run_intervals" ADD COLUMN "active_ms" double precision;--> statement-breakpoint
ALTER TABLE "run_intervals" ADD COLUMN "stage" integer;--> statement-breakpoint
ALTER TABLE "run_intervals" ADD COLUMN "step" jsonb;