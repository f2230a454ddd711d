CREATE TABLE "metrics_exports" (
	"org_id" text PRIMARY KEY NOT NULL,
	"kind" text DEFAULT 'prometheus-remote-write' NOT NULL,
	"url" text NOT NULL,
	"authorization" text,
	"labels" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_push_at" timestamp with time zone,
	"last_status" integer,
	"last_error" text
);
--> statement-breakpoint
ALTER TABLE "metrics_exports" ADD CONSTRAINT "metrics_exports_org_id_orgs_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."orgs"("id") ON DELETE cascade ON UPDATE no action;