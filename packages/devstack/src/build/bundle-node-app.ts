import { existsSync, readdirSync, rmSync } from "node:fs";
import path from "node:path";
import { build } from "esbuild";

/**
 * Modules no bundle includes: optional native speed-ups their users load in a try/catch (ws's
 * bufferutil and utf-8-validate, pg-native, msgpackr-extract) and prometheus-remote-write's
 * node-fetch fallback (the hub always passes its own fetch). Absent at run time, each falls back.
 */
const OPTIONAL = ["bufferutil", "utf-8-validate", "pg-native", "msgpackr-extract", "node-fetch"];

export interface BundleOptions {
  entry: string;
  outfile: string;
  /** Packages left to node_modules at run time (besides the optional ones above). */
  external?: string[];
  /**
   * Whitespace and comments left out (names kept, so stack traces still read). V8 keeps a module's
   * whole source in memory for lazy compilation, and one non-ASCII character in a comment makes it
   * two bytes a character: the agent's 6 MB bundle held 12 MB, its 4 MB compact one 4 MB.
   */
  compact?: boolean;
  /**
   * Each dynamic import() a chunk of its own beside outfile (`<name>-<hash>.<ext>`), loaded when first
   * imported: a process parses only what it runs. The agent's engine thread loaded all 4 MB of the
   * one-file bundle (every driver, the CLI, the hub link): ~200 ms of CPU per thread before its first send.
   */
  splitting?: boolean;
}

/** The bundle's inputs, repo-relative (node_modules left out), for a launcher to tell a stale bundle: see build-bin.ts. */
export type BundleInputs = string[];

/**
 * One ES module for Node 20 from a deployable's TypeScript entry (esbuild, the compiler tsx runs):
 * what its image runs instead of TypeScript through tsx, so no dev dependency is needed at run
 * time. CommonJS dependencies inside get a `require` (createRequire), as they expect.
 */
export async function bundleNodeApp({ entry, outfile, external = [], compact = false, splitting = false }: BundleOptions): Promise<BundleInputs> {
  const requireShim = "import { createRequire as __volleyCreateRequire } from 'node:module'; const require = __volleyCreateRequire(import.meta.url);";
  const dir = path.dirname(outfile);
  const ext = path.extname(outfile);
  const name = path.basename(outfile, ext);
  if (splitting && existsSync(dir)) {
    // Chunk names carry a content hash: an earlier build's chunks would pile up beside the new ones.
    for (const f of readdirSync(dir, { withFileTypes: true }).filter((e) => e.isFile() && e.name.startsWith(`${name}-`) && e.name.endsWith(ext)))
      rmSync(path.join(dir, f.name));
  }
  const output = splitting
    ? { entryPoints: { [name]: entry }, outdir: dir, splitting: true, chunkNames: `${name}-[hash]`, outExtension: { ".js": ext } }
    : { entryPoints: [entry], outfile };
  const { metafile } = await build({
    ...output,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    external: [...OPTIONAL, ...external],
    banner: { js: requireShim },
    logLevel: "warning",
    legalComments: "none",
    minifyWhitespace: compact,
    metafile: true,
  });
  return Object.keys(metafile.inputs).filter((f) => !f.includes("node_modules/"));
}
