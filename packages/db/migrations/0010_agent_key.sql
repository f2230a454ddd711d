ALTER TABLE "agents" ADD COLUMN "agent_key" text;--> statement-breakpoint
CREATE UNIQUE INDEX "agents_agent_key_idx" ON "agents" USING btree ("agent_key");