-- better-auth's organization model needs a slug; the default org's is "default".
UPDATE "orgs" SET "slug" = 'default' WHERE "id" = 'org_default' AND "slug" IS NULL;
--> statement-breakpoint
-- Plans saved before versioning get their current document as version 1.
INSERT INTO "plan_versions" ("plan_id", "version", "name", "document", "created_at")
SELECT "id", "version", "name", "document", "updated_at" FROM "plans"
ON CONFLICT DO NOTHING;
