#!/usr/bin/env node
// The CLI is TypeScript run through tsx; registering it here keeps the bin a plain node script,
// so `npx volley validate plan.yaml` works from the repo with no build step.
import { register } from "tsx/esm/api";

register();
await import("../src/main.ts");
