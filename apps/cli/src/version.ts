import { readFileSync } from "node:fs";

/** The CLI's version, from its package.json (the same file bin/volley.js answers --version from before tsx loads). */
export const CLI_VERSION: string = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;
