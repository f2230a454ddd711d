#!/usr/bin/env node
// The agent's compiled bundle (dist/, built by `npm run setup`) while its sources are unchanged, else
// its TypeScript through tsx, as `npm start` runs it: `npx volley-agent run plan.yaml` works with or without a build.
import "./v8-flags.mjs";
import { launchBin } from "@volley/devstack/launch-bin";

await launchBin(import.meta.url, { compiled: "../dist/volley-agent.mjs", source: "../src/main.ts" });
