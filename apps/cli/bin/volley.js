#!/usr/bin/env node
// The CLI's compiled bundle (dist/, built by `npm run setup`) while its sources are unchanged, else
// its TypeScript through tsx: `npx volley validate plan.yaml` works from the repo with or without a build.
import { launchBin } from "@volley/devstack/launch-bin";

await launchBin(import.meta.url, { compiled: "../dist/volley.mjs", source: "../src/main.ts" });
