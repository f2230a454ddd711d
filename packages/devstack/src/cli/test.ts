/**
 * `npm test`: one set of throwaway PostgreSQL and Redis servers (or VOLLEY_TEST_DATABASE_URL /
 * VOLLEY_TEST_REDIS_URL), then through Turborepo: Biome's lint and knip over the whole repository
 * (root tasks), every workspace's typecheck (bench/ included) and every workspace's tests.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { repoRoot } from "../env";
import { startTestServices } from "../test-services";

async function main() {
  const services = await startTestServices();
  console.log(`[test] PostgreSQL ${services.databaseServerUrl.replace(/:[^:@/]*@/, ":***@")}, Redis ${services.redisUrl}`);
  const turbo = path.join(repoRoot, "node_modules/turbo/bin/turbo");
  const child = spawn(process.execPath, [turbo, "run", "lint", "knip", "typecheck", "test", "--concurrency=1", ...process.argv.slice(2)], {
    stdio: "inherit",
    cwd: repoRoot,
    env: { ...process.env, VOLLEY_TEST_DATABASE_URL: services.databaseServerUrl, VOLLEY_TEST_REDIS_URL: services.redisUrl },
  });
  const stop = () => child.kill("SIGTERM");
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  const code = await new Promise<number>((resolve) => child.once("exit", (c) => resolve(c ?? 1)));
  await services.stop();
  process.exit(code);
}

main().catch((err: unknown) => {
  console.error(`[test] ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
