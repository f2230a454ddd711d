-- Every record belongs to an org; single-tenant installs use this one until accounts exist.
INSERT INTO "orgs" ("id", "name") VALUES ('org_default', 'Default') ON CONFLICT ("id") DO NOTHING;
