CREATE TABLE "run_meters" (
	"run_id" text PRIMARY KEY NOT NULL,
	"frames" integer NOT NULL,
	"summary" jsonb,
	"analysis" jsonb,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"frames_deleted_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "run_points" (
	"run_id" text NOT NULL,
	"index" integer NOT NULL,
	"point" jsonb NOT NULL,
	"histograms" jsonb NOT NULL,
	"frames" integer NOT NULL,
	CONSTRAINT "run_points_run_id_index_pk" PRIMARY KEY("run_id","index")
);
--> statement-breakpoint
ALTER TABLE "run_meters" ADD CONSTRAINT "run_meters_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "run_points" ADD CONSTRAINT "run_points_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE cascade ON UPDATE no action;