// Plain JavaScript, loaded by the repo's bins before anything is compiled: see src/build/build-bin.ts.
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** True when the bundle exists and none of the sources it was built from changed since. */
function fresh(bundle) {
  try {
    const { builtAt, files } = JSON.parse(readFileSync(`${bundle}.inputs.json`, "utf8"));
    if (statSync(bundle).mtimeMs < builtAt - 1000) return false;
    const dir = path.dirname(bundle);
    return files.every((f) => statSync(path.resolve(dir, f)).mtimeMs <= builtAt);
  } catch {
    return false;
  }
}

/**
 * Starts a bin: `--version` straight from its package.json; otherwise its compiled bundle when it
 * is fresh, else its TypeScript through tsx (~2 s of compiling at every start, but always current).
 * `compiled` and `source` are relative to the bin's own URL.
 */
export async function launchBin(binUrl, { compiled, source }) {
  const args = process.argv.slice(2);
  if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
    process.stdout.write(`${JSON.parse(readFileSync(new URL("../package.json", binUrl), "utf8")).version}\n`);
    return;
  }
  const bundle = fileURLToPath(new URL(compiled, binUrl));
  if (fresh(bundle)) {
    await import(pathToFileURL(bundle).href);
    return;
  }
  const { register } = await import("tsx/esm/api");
  register();
  await import(new URL(source, binUrl).href);
}
