/**
 * `npm run setup` (after `npm install`): makes sure Redis can run (installing redis-server from the
 * OS packages when possible), initialises the embedded PostgreSQL, packs the agent (apps/agent/dist,
 * served by web to agent hosts), builds the web UI and compiles the `volley` and `volley-agent` bins.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { loadEnv, repoRoot } from "../env";
import { REDIS_INSTALL_HINT, redisServerPath } from "../local-redis";
import { startEmbeddedPostgres } from "../embedded-postgres";
import { installSecrets } from "./install-secrets";

const say = (line: string) => console.log(`[setup] ${line}`);

function run(command: string, args: string[]): boolean {
  say(`$ ${command} ${args.join(" ")}`);
  return spawnSync(command, args, { stdio: "inherit", cwd: repoRoot }).status === 0;
}

function ensureRedis(): void {
  if (redisServerPath()) return say("redis-server: found");
  const isRoot = process.getuid?.() === 0;
  const hasApt = spawnSync("sh", ["-c", "command -v apt-get"]).status === 0;
  const canSudo = !isRoot && spawnSync("sudo", ["-n", "true"]).status === 0;
  if (hasApt && (isRoot || canSudo)) {
    say("redis-server is missing; installing it from the OS packages");
    const prefix = isRoot ? [] : ["sudo", "-n"];
    const cmd = (args: string[]) => (prefix.length ? run(prefix[0]!, [...prefix.slice(1), ...args]) : run(args[0]!, args.slice(1)));
    if (cmd(["apt-get", "update"]) && cmd(["apt-get", "install", "-y", "redis-server"]) && redisServerPath()) return;
  }
  throw new Error(`redis-server is not installed — run: ${REDIS_INSTALL_HINT}, then \`npm run setup\` again`);
}

async function main() {
  const [major, minor] = process.versions.node.split(".").map(Number) as [number, number];
  if (major < 20 || (major === 20 && minor < 9)) throw new Error(`Node ${process.versions.node} is too old — install Node 20.9 or newer`);
  const env = loadEnv();

  if (env.REDIS_URL) say("Redis: using REDIS_URL");
  else ensureRedis();

  if (env.DATABASE_URL) say("PostgreSQL: using DATABASE_URL (migrations run when the hub starts)");
  else {
    const dir = path.join(env.VOLLEY_DATA_DIR, "pg");
    say(`PostgreSQL: initialising the embedded server in ${dir}`);
    const pg = await startEmbeddedPostgres({ dir, port: env.VOLLEY_PG_PORT });
    await pg.stop();
  }

  // AUTH_SECRET and VOLLEY_SECRETS_KEY of this install, passed to web and hub by npm start.
  installSecrets(env.VOLLEY_DATA_DIR, say);

  // The agent package web serves to the installer and the agent image (web also builds it when missing).
  if (!run("npm", ["run", "pack", "-w", "@volley/agent"])) throw new Error("packing the agent failed (see above)");
  // The web UI, and the CLI's and agent's compiled bins (they start in a tenth of the time TypeScript through tsx takes).
  const turbo = path.join(repoRoot, "node_modules/turbo/bin/turbo");
  if (!run(process.execPath, [turbo, "run", "build", "--filter=@volley/web", "--filter=@volley/cli", "--filter=@volley/agent"])) {
    throw new Error("building the web UI and the bins failed (see above)");
  }
  say("done — now run: npm start");
}

main().catch((err: unknown) => {
  console.error(`[setup] ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
