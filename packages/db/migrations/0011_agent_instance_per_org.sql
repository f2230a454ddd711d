DROP INDEX "agents_instance_idx";--> statement-breakpoint
CREATE UNIQUE INDEX "agents_org_instance_idx" ON "agents" USING btree ("org_id","instance_id");