/**
 * The images and the compose file, for real (opt-in: VOLLEY_CONTAINER_TESTS=1, ~10 minutes from
 * cold, needs root, podman with the CNI dnsname plugin, debootstrap and docker-compose): builds the Node.js base images from
 * Debian's packages and this machine's node (infra/images/build-base.sh), the four images
 * (build-images.sh) and the stand-ins for the official postgres and redis images; checks the
 * images' sizes; starts infra/compose.yaml with Compose itself (docker-compose, talking to podman's
 * Docker-compatible API) on its default ports; signs up, makes an API token and runs a plan through
 * web, hub and the agent container to `passed`, its counts checked against the demo target's own.
 *
 * What stands in, and why: podman for the Docker engine (none runs here), and this test for
 * systemd's timers, which podman uses to run HEALTHCHECKs (`podman healthcheck run` every 2 s), so
 * compose's `condition: service_healthy` is met the way a Docker engine would meet it.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../env";
import { infraDir } from "./infra-test-kit";

const ENABLED = process.env.VOLLEY_CONTAINER_TESTS === "1";
// dnsname: the CNI plugin that lets containers find each other by service name on podman's CNI networks.
const missing = ["podman", "debootstrap", "docker-compose"].filter((c) => spawnSync("sh", ["-c", `command -v ${c}`]).status !== 0);
if (!["/usr/lib/cni/dnsname", "/usr/libexec/cni/dnsname", "/opt/cni/bin/dnsname"].some((p) => spawnSync("test", ["-x", p]).status === 0))
  missing.push("golang-github-containernetworking-plugin-dnsname");
const why = !ENABLED
  ? "set VOLLEY_CONTAINER_TESTS=1 to build the images and run the compose stack (~10 minutes)"
  : process.getuid?.() !== 0
    ? "needs root (podman, debootstrap)"
    : missing.length
      ? `needs ${missing.join(", ")} (apt-get install -y ${missing.join(" ")})`
      : null;
if (why) console.warn(`container-stack.test: skipped — ${why}`);

/** The issue's ceilings, MB (10^6 bytes, as podman reports). */
const MAX_MB = { agent: 200, hub: 300, web: 400 } as const;
const PROJECT = "volley-ct";
const WEB = "http://127.0.0.1:3000";
const CONTAINERS_CONF = path.join(infraDir, "images", "containers.conf");
const NODE_VERSION = process.versions.node;

function sh(command: string, args: string[], env: NodeJS.ProcessEnv = {}, timeout = 1_200_000): string {
  const res = spawnSync(command, args, { env: { ...process.env, CONTAINERS_CONF, ...env }, encoding: "utf8", timeout, maxBuffer: 64 * 1024 * 1024 });
  if (res.status !== 0) throw new Error(`${command} ${args.join(" ")} exited with ${res.status}:\n${`${res.stdout}${res.stderr}`.slice(-4000)}`);
  return res.stdout;
}

const sizeMb = (image: string) => Number(sh("podman", ["image", "inspect", "--format", "{{.Size}}", image]).trim()) / 1e6;

describe.skipIf(why !== null)("the images and infra/compose.yaml, built and run", () => {
  let work = "";
  let service: ChildProcess | undefined;
  let healthLoop: ChildProcess | undefined;
  let composeEnv: NodeJS.ProcessEnv = {};
  const timings: Record<string, number> = {};
  // docker-compose 1.29 (Debian's) predates the top-level `name:`; -p names the project instead, so
  // it reads the file with that one line left out and everything else as written.
  let composeFile = "";
  const compose = (args: string[], timeout?: number) => sh("docker-compose", ["-f", composeFile, "-p", PROJECT, ...args], composeEnv, timeout);
  /** compose down, then whatever podman refused to remove in compose's order (the agent shares the targets' namespace). */
  const teardown = () => {
    spawnSync("docker-compose", ["-f", composeFile, "-p", PROJECT, "down", "-v", "--remove-orphans"], {
      env: { ...process.env, CONTAINERS_CONF, ...composeEnv },
      timeout: 180_000,
    });
    const label = `label=com.docker.compose.project=${PROJECT}`;
    const ids = spawnSync("podman", ["ps", "-a", "-q", "--filter", label], { encoding: "utf8", env: { ...process.env, CONTAINERS_CONF } })
      .stdout.split("\n")
      .filter(Boolean);
    if (ids.length) spawnSync("podman", ["rm", "-f", ...ids], { env: { ...process.env, CONTAINERS_CONF } });
    const volumes = spawnSync("podman", ["volume", "ls", "-q", "--filter", label], { encoding: "utf8", env: { ...process.env, CONTAINERS_CONF } })
      .stdout.split("\n")
      .filter(Boolean);
    if (volumes.length) spawnSync("podman", ["volume", "rm", "-f", ...volumes], { env: { ...process.env, CONTAINERS_CONF } });
    spawnSync("podman", ["network", "rm", "-f", `${PROJECT}_default`], { env: { ...process.env, CONTAINERS_CONF } });
  };

  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), "volley-containers-"));
    // Beside the original, so its relative build contexts (..) resolve the same.
    composeFile = path.join(infraDir, `.compose-${process.pid}.yaml`);
    writeFileSync(composeFile, readFileSync(path.join(infraDir, "compose.yaml"), "utf8").replace(/^name: .*\n/m, ""));
    let t = Date.now();
    sh(path.join(infraDir, "images", "build-images.sh"), ["local"]);
    timings.images = (Date.now() - t) / 1000;
    const base = `localhost/volley-node:${NODE_VERSION}`;
    t = Date.now();
    for (const [name, file] of [
      ["localhost/volley/postgres:15", "postgres.Dockerfile"],
      ["localhost/volley/redis:7", "redis.Dockerfile"],
    ] as const) {
      sh("podman", [
        "build",
        "--quiet",
        "--layers",
        "--format",
        "docker",
        "-f",
        path.join(infraDir, "images", file),
        "--build-arg",
        `BASE_IMAGE=${base}`,
        "-t",
        name,
        path.join(infraDir, "images"),
      ]);
    }
    timings.stores = (Date.now() - t) / 1000;

    // Compose talks to podman's Docker-compatible API.
    const socket = path.join(work, "podman.sock");
    service = spawn("podman", ["system", "service", "--time=0", `unix://${socket}`], { env: { ...process.env, CONTAINERS_CONF }, stdio: "ignore" });
    for (let i = 0; i < 100 && spawnSync("test", ["-S", socket]).status !== 0; i++) await new Promise((r) => setTimeout(r, 100));
    composeEnv = {
      DOCKER_HOST: `unix://${socket}`,
      COMPOSE_DOCKER_CLI_BUILD: "0",
      VOLLEY_AGENT_TOKEN: "ct-agent-token-0123456789abcdef",
      VOLLEY_SECRETS_KEY: Buffer.alloc(32, 5).toString("base64"),
      AUTH_SECRET: "container-test-auth-secret-0123456789abcdef",
      POSTGRES_PASSWORD: "ct-postgres-password",
      VOLLEY_POSTGRES_IMAGE: "localhost/volley/postgres:15",
      VOLLEY_REDIS_IMAGE: "localhost/volley/redis:7",
      VOLLEY_TAG: "local",
      VOLLEY_HTTP_CLUSTER_WORKERS: "0",
      // This sandbox caps open files and processes below compose's defaults for the agent, and a
      // container here cannot raise either (runc refuses): give it what the sandbox allows.
      VOLLEY_AGENT_NOFILE: /Max open files\s+\d+\s+(\d+)/.exec(readFileSync("/proc/self/limits", "utf8"))?.[1] ?? "1048576",
      VOLLEY_AGENT_NPROC: "4096",
    };
    teardown();
    // podman runs HEALTHCHECKs from systemd timers; there is no systemd here, so a loop of our own runs
    // them on the same beat (a process: compose below blocks this one's event loop).
    healthLoop = spawn(
      "sh",
      [
        "-c",
        `while :; do for n in $(podman ps --filter label=com.docker.compose.project=${PROJECT} --format '{{.Names}}'); do podman healthcheck run "$n" >/dev/null 2>&1; done; sleep 2; done`,
      ],
      { env: { ...process.env, CONTAINERS_CONF }, stdio: "ignore", detached: true },
    );
    t = Date.now();
    compose(["up", "-d", "--no-build"], 600_000);
    for (;;) {
      const ok = await fetch(`${WEB}/api/v1/openapi.json`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      if (Date.now() - t > 240_000) throw new Error(`web did not answer in 240 s:\n${compose(["logs", "--tail", "40"])}`);
      await new Promise((r) => setTimeout(r, 1000));
    }
    timings.up = (Date.now() - t) / 1000;
  }, 1_800_000);

  afterAll(async () => {
    if (healthLoop?.pid) process.kill(-healthLoop.pid, "SIGTERM");
    try {
      if (composeEnv.DOCKER_HOST) teardown();
    } finally {
      service?.kill("SIGTERM");
      if (work) rmSync(work, { recursive: true, force: true });
      if (composeFile) rmSync(composeFile, { force: true });
    }
    console.info(`container-stack timings (s): ${JSON.stringify(timings)}`);
  }, 300_000);

  it("builds images within their size budgets, with no tsx or dev dependencies in the deployables", () => {
    const sizes = Object.fromEntries(["agent", "hub", "web", "targets"].map((app) => [app, Math.round(sizeMb(`localhost/volley/${app}:local`))]));
    console.info(`image sizes (MB): ${JSON.stringify(sizes)}; base ${Math.round(sizeMb(`localhost/volley-node-runtime:${NODE_VERSION}`))} MB`);
    for (const [app, max] of Object.entries(MAX_MB)) expect(sizes[app], app).toBeLessThanOrEqual(max);
    for (const app of ["agent", "hub", "web"]) {
      // Packages, not folders that happen to share a name (next/dist/server/typescript is Next's own); and no npm at all.
      const probe =
        "find / -xdev -type d \\( -path '*/node_modules/tsx' -o -path '*/node_modules/typescript' -o -path '*/node_modules/vitest' -o -path '*/node_modules/npm' \\) 2>/dev/null | head -5; command -v npm";
      const found = spawnSync("podman", ["run", "--rm", "--entrypoint", "sh", `localhost/volley/${app}:local`, "-c", probe], {
        encoding: "utf8",
        env: { ...process.env, CONTAINERS_CONF },
      }).stdout;
      expect(found.trim(), `${app} ships dev tooling`).toBe("");
    }
  });

  it("runs a plan through the compose stack to passed, with counts equal to the demo target's own", async () => {
    // The install's first account, then an API token, as a user would from the browser and Settings.
    const signUp = await fetch(`${WEB}/api/auth/sign-up/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: "http://localhost:3000" },
      body: JSON.stringify({ name: "Container Owner", email: "owner@containers.example", password: "correct horse battery" }),
    });
    expect(signUp.status, await signUp.clone().text()).toBe(200);
    const cookie = signUp.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
    const tokenRes = await fetch(`${WEB}/api/v1/tokens`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie, origin: "http://localhost:3000" },
      body: JSON.stringify({ name: "ci", scopes: ["read", "run"] }),
    });
    expect(tokenRes.status, await tokenRes.clone().text()).toBe(201);
    const { secret } = (await tokenRes.json()) as { secret: string };
    const auth = { authorization: `Bearer ${secret}`, "content-type": "application/json" };

    await fetch("http://127.0.0.1:9001/stats", { method: "DELETE" });
    const created = await fetch(`${WEB}/api/v1/runs`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({
        plan: {
          name: "through the containers",
          target: { url: "ws://127.0.0.1:9001/echo?delay=20", protocol: "ws" },
          connections: { count: 20, rate: 20 },
          scenario: { kind: "echo", message: { bytes: 64, rate: 5 }, duration: "5s" },
          thresholds: ["errors.rate < 1%"],
        },
      }),
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const { id } = (await created.json()) as { id: string };
    let run: { status: string; reason?: string; summary?: { messages: { sent: number; received: number } } } = { status: "queued" };
    const deadline = Date.now() + 120_000;
    while (!["passed", "failed", "errored", "aborted", "degraded", "inconclusive"].includes(run.status) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 1000));
      run = (await (await fetch(`${WEB}/api/v1/runs/${id}`, { headers: auth })).json()) as typeof run;
    }
    expect(run.status, `${run.reason ?? ""}\n${compose(["logs", "--tail", "30", "hub", "agent"])}`).toBe("passed");
    const stats = (await (await fetch("http://127.0.0.1:9001/stats")).json()) as { hold: { count: number } };
    expect(run.summary!.messages.sent).toBeGreaterThan(0);
    expect(run.summary!.messages.received).toBe(run.summary!.messages.sent);
    expect(stats.hold.count).toBe(run.summary!.messages.sent);
    console.info(`compose run ${id}: ${run.summary!.messages.sent} sent, ${stats.hold.count} echoed by the target (repo ${repoRoot})`);
  });
});
