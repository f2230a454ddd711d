#!/usr/bin/env node
// The agent is TypeScript run through tsx, as `npm start` does; registering it here keeps the
// bin a plain node script, so `npx volley-agent run plan.yaml` needs no build step.
import { register } from "tsx/esm/api";

register();
await import("../src/main.ts");
