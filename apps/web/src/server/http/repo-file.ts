import { existsSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * A file of the Volley repository, looked for from the working directory upwards: web runs from
 * apps/web (npm start, the image) or the repository root. Returns the path found, or null with the
 * paths tried (for the error message).
 */
export function findRepoFile(relative: string): { path: string | null; tried: string[] } {
  const tried: string[] = [];
  let dir = process.cwd();
  for (let i = 0; i < 4; i++) {
    // Looked up at run time only: nothing here belongs in the build's traced output (the image copies these files itself).
    const candidate = join(/*turbopackIgnore: true*/ dir, relative);
    tried.push(candidate);
    if (existsSync(/*turbopackIgnore: true*/ candidate)) return { path: candidate, tried };
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return { path: null, tried };
}
