CREATE TABLE "plan_schedules" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"plan_id" text NOT NULL,
	"cron" text NOT NULL,
	"timezone" text DEFAULT 'UTC' NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"created_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_run_at" timestamp with time zone,
	"last_run_id" text,
	"last_error" text
);
--> statement-breakpoint
CREATE TABLE "run_shares" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"run_id" text NOT NULL,
	"created_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"webhook_id" text NOT NULL,
	"delivery_id" text NOT NULL,
	"event" text NOT NULL,
	"run_id" text,
	"attempt" integer NOT NULL,
	"test" boolean DEFAULT false NOT NULL,
	"status" integer,
	"ok" boolean NOT NULL,
	"error" text,
	"response_excerpt" text,
	"duration_ms" double precision NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "plans" ADD COLUMN "tags" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "plans" ADD COLUMN "notes" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "plans" ADD COLUMN "baseline_run_id" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "tags" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "notes" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "schedule_id" text;--> statement-breakpoint
ALTER TABLE "webhooks" ADD COLUMN "format" text DEFAULT 'generic' NOT NULL;--> statement-breakpoint
ALTER TABLE "plan_schedules" ADD CONSTRAINT "plan_schedules_org_id_orgs_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."orgs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plan_schedules" ADD CONSTRAINT "plan_schedules_plan_id_plans_id_fk" FOREIGN KEY ("plan_id") REFERENCES "public"."plans"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "run_shares" ADD CONSTRAINT "run_shares_org_id_orgs_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."orgs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "run_shares" ADD CONSTRAINT "run_shares_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_webhook_id_webhooks_id_fk" FOREIGN KEY ("webhook_id") REFERENCES "public"."webhooks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "plan_schedules_plan_idx" ON "plan_schedules" USING btree ("plan_id");--> statement-breakpoint
CREATE INDEX "plan_schedules_org_idx" ON "plan_schedules" USING btree ("org_id");--> statement-breakpoint
CREATE INDEX "run_shares_run_idx" ON "run_shares" USING btree ("run_id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_webhook_at_idx" ON "webhook_deliveries" USING btree ("webhook_id","at");--> statement-breakpoint
ALTER TABLE "plans" ADD CONSTRAINT "plans_baseline_run_id_runs_id_fk" FOREIGN KEY ("baseline_run_id") REFERENCES "public"."runs"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "runs_tags_idx" ON "runs" USING gin ("tags");