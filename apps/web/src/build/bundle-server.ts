/**
 * The web image's server: apps/web/server.ts (Next's handler, the live feed and the hub relay) as
 * one ES module, dist/server.mjs, with every dependency inside but Next and React, which come from
 * Next's standalone output (`VOLLEY_NEXT_STANDALONE=1 next build`) the image runs it beside.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { bundleNodeApp } from "@volley/devstack/bundle-node-app";

const WEB_DIR = fileURLToPath(new URL("../..", import.meta.url));

await bundleNodeApp({
  entry: path.join(WEB_DIR, "server.ts"),
  outfile: path.join(WEB_DIR, "dist", "server.mjs"),
  external: ["next", "react", "react-dom"],
});
console.log("bundled web's server into dist/server.mjs");
