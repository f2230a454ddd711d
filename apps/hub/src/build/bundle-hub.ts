/**
 * `npm run build -w @volley/hub`: the hub as one ES module, dist/bin/hub.mjs, every dependency
 * inside, and the database migrations it applies at start beside it (dist/migrations, where
 * @volley/db's migrationsDir() looks from the bundle). The image runs this with plain node: no
 * TypeScript, no node_modules, no dev dependencies.
 */
import { cpSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { migrationsDir } from "@volley/db";
import { bundleNodeApp } from "@volley/devstack/bundle-node-app";

const HUB_DIR = fileURLToPath(new URL("../..", import.meta.url));
const DIST = path.join(HUB_DIR, "dist");

rmSync(DIST, { recursive: true, force: true });
await bundleNodeApp({ entry: path.join(HUB_DIR, "src", "main.ts"), outfile: path.join(DIST, "bin", "hub.mjs") });
cpSync(migrationsDir(), path.join(DIST, "migrations"), { recursive: true });
console.log(`bundled the hub into ${path.relative(process.cwd(), DIST) || "."}/bin/hub.mjs, migrations beside it`);
