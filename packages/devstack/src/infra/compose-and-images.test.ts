/**
 * infra/compose.yaml and infra/docker/*.Dockerfile, checked without Docker: every service builds
 * from a Dockerfile in this repo or runs an official image, every Volley service's environment is
 * accepted by that app's own env.ts (run for real in a child process), the services point at each
 * other correctly, and every image runs as non-root with a command that exists.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parsePlanDocument, TEMPLATES } from "@volley/contracts";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../env";
import { freePort } from "../free-port";
import { startApp } from "../stack";
import { appOf, composePath, finalStage, readCompose, readDockerfile, repoPathOf, serviceEnv, type ComposeService } from "./deploy-files";
import { checkAppEnv, envNamesRead, infraDir, type DeployableApp } from "./infra-test-kit";

const APPS: DeployableApp[] = ["web", "hub", "agent", "targets"];
/** The compiled files the deployables' images run: the script that writes each, a name it writes, and the RUN that calls it. */
const BUILT_BY: Record<string, { source: string; names: string; run: string }> = {
  "bin/hub.mjs": { source: "apps/hub/src/build/bundle-hub.ts", names: '"hub.mjs"', run: "npm run build -w @volley/hub" },
  "server.mjs": { source: "apps/web/src/build/bundle-server.ts", names: '"server.mjs"', run: "npm run bundle" },
  "/opt/volley-agent/bin/volley-agent": { source: "apps/agent/src/pack/agent-package.ts", names: '"volley-agent"', run: "npm run pack -w @volley/agent" },
};
// Set by the images for Node and Next themselves, not read through env.ts.
const RUNTIME_VARS = new Set(["NODE_ENV", "NEXT_TELEMETRY_DISABLED"]);

const { services } = readCompose();
const volley = Object.entries(services).flatMap(([name, s]) => {
  const app = appOf(s);
  return app ? [{ name, app, service: s }] : [];
});
// What an operator must set: compose refuses to start without it (no default token).
const REQUIRED = {
  VOLLEY_AGENT_TOKEN: "0123456789abcdef".repeat(4),
  VOLLEY_SECRETS_KEY: Buffer.alloc(32, 7).toString("base64"),
  AUTH_SECRET: "compose-test-auth-secret-0123456789abcdef",
};
const envOf = (s: ComposeService, vars: Record<string, string> = {}) => serviceEnv(s, { ...REQUIRED, ...vars });
const byApp = (app: DeployableApp) => volley.find((v) => v.app === app) as { name: string; app: DeployableApp; service: ComposeService };

describe("infra/compose.yaml", () => {
  it("runs web, hub, one agent, targets, and official postgres and redis images", () => {
    expect(volley.map((v) => v.app).sort()).toEqual([...APPS].sort());
    for (const [name, s] of Object.entries(services)) {
      if (s.build) {
        expect(path.resolve(infraDir, s.build.context), name).toBe(path.resolve(repoRoot));
        expect(existsSync(path.join(repoRoot, s.build.dockerfile)), `${name}: ${s.build.dockerfile}`).toBe(true);
        expect(appOf(s), `${name} builds one of the Volley Dockerfiles`).toBeDefined();
      } else {
        // The official image, or a stand-in named by a variable (infra/images) with the official one as default.
        expect(s.image, name).toMatch(/^(\$\{VOLLEY_(POSTGRES|REDIS)_IMAGE:-)?(postgres|redis):\d+(\.\d+)*(-alpine)?\}?$/);
      }
      for (const dep of Object.keys(s.depends_on ?? {})) expect(Object.keys(services), `${name} depends on ${dep}`).toContain(dep);
    }
  });

  it.each(APPS)("gives %s an environment its env.ts accepts, and only variables it reads", (app) => {
    const env = envOf(byApp(app).service);
    const check = checkAppEnv(app, env);
    expect(check.ok, check.output).toBe(true);
    const read = envNamesRead(app);
    for (const name of Object.keys(env)) expect(read, `${app} does not read ${name} (apps/${app}/src/env.ts)`).toContain(name);
  });

  it("also accepts the secrets set from the shell", () => {
    const vars = {
      POSTGRES_PASSWORD: "s3cret",
      VOLLEY_AGENT_TOKEN: "a-long-agent-token",
      VOLLEY_SECRETS_KEY_OLD: Buffer.alloc(32, 9).toString("base64"),
      AUTH_SECRET: "x".repeat(40),
      VOLLEY_PUBLIC_URL: "https://volley.example.com",
    };
    for (const app of APPS) {
      const check = checkAppEnv(app, envOf(byApp(app).service, vars));
      expect(check.ok, `${app}: ${check.output}`).toBe(true);
    }
  });

  it("has no default agent token: hub and agent need VOLLEY_AGENT_TOKEN set, and say how to make one", () => {
    expect(readFileSync(composePath, "utf8")).not.toContain("dev-local-agent-token");
    for (const app of ["hub", "agent"] as const) {
      const service = byApp(app).service;
      expect(() => serviceEnv(service), app).toThrow(/VOLLEY_AGENT_TOKEN.*openssl rand/);
      expect(() => serviceEnv(service, { VOLLEY_AGENT_TOKEN: "" }), `${app} with an empty token`).toThrow(/VOLLEY_AGENT_TOKEN/);
      expect(envOf(service).AGENT_TOKEN).toBe(REQUIRED.VOLLEY_AGENT_TOKEN);
    }
  });

  it("requires VOLLEY_SECRETS_KEY for web and hub (they seal and open webhook secrets with it), the same value for both", () => {
    for (const app of ["web", "hub"] as const) {
      const { VOLLEY_SECRETS_KEY: _, ...others } = REQUIRED;
      expect(() => serviceEnv(byApp(app).service, others), app).toThrow(/VOLLEY_SECRETS_KEY.*openssl rand -base64 32/);
      expect(envOf(byApp(app).service).VOLLEY_SECRETS_KEY).toBe(REQUIRED.VOLLEY_SECRETS_KEY);
    }
  });

  it("requires AUTH_SECRET for web (nothing derives one), saying how to make one; web itself refuses to start without it", () => {
    const { AUTH_SECRET: _, ...others } = REQUIRED;
    expect(() => serviceEnv(byApp("web").service, others)).toThrow(/AUTH_SECRET.*openssl rand -base64 32/);
    expect(envOf(byApp("web").service).AUTH_SECRET).toBe(REQUIRED.AUTH_SECRET);
    const { AUTH_SECRET: __, ...withoutSecret } = envOf(byApp("web").service);
    const check = checkAppEnv("web", withoutSecret as Record<string, string>);
    expect(check.ok).toBe(false);
    expect(check.output).toMatch(/AUTH_SECRET is not set — .*openssl rand -base64 32/);
  });

  it("wires the services to each other", () => {
    const pg = Object.entries(services).find(([, s]) => /(^|-)postgres:/.test(s.image ?? ""));
    const redis = Object.entries(services).find(([, s]) => /(^|-)redis:/.test(s.image ?? ""));
    expect(pg && redis).toBeTruthy();
    const pgEnv = envOf(pg![1]);
    for (const app of ["web", "hub"] as const) {
      const env = envOf(byApp(app).service);
      const db = new URL(env.DATABASE_URL as string);
      expect([db.hostname, db.username, db.password, db.pathname]).toEqual([pg![0], pgEnv.POSTGRES_USER, pgEnv.POSTGRES_PASSWORD, `/${pgEnv.POSTGRES_DB}`]);
      expect(new URL(env.REDIS_URL as string).hostname).toBe(redis![0]);
      expect(Object.keys(byApp(app).service.depends_on ?? {}).length).toBeGreaterThan(0);
    }
    const hub = byApp("hub");
    const hubEnv = envOf(hub.service);
    const agentEnv = envOf(byApp("agent").service);
    const hubUrl = new URL(agentEnv.HUB_URL as string);
    expect([hubUrl.hostname, hubUrl.port]).toEqual([hub.name, hubEnv.HUB_PORT]);
    // Web relays agents of other machines (/hub) to the same hub.
    const relayed = new URL(envOf(byApp("web").service).HUB_URL as string);
    expect([relayed.hostname, relayed.port]).toEqual([hub.name, hubEnv.HUB_PORT]);
    // Until enrollment replaces it, the agent presents the token the hub checks.
    expect(agentEnv.AGENT_TOKEN).toBe(hubEnv.AGENT_TOKEN);
    expect(hubEnv.HUB_HOST).toBe("0.0.0.0");
    expect(envOf(byApp("web").service).WEB_HOST).toBe("0.0.0.0");
    expect(envOf(byApp("targets").service).TARGETS_HOST).toBe("0.0.0.0");
    // Published ports reach the port each app listens on.
    const listens: Record<string, string[]> = {
      web: [envOf(byApp("web").service).WEB_PORT as string],
      hub: [hubEnv.HUB_PORT as string],
      targets: [
        "WS_ECHO_PORT",
        "SOCKETIO_ECHO_PORT",
        "SOCKJS_ECHO_PORT",
        "STOMP_ECHO_PORT",
        "HTTP_ECHO_PORT",
        "SOCKETCLUSTER_ECHO_PORT",
        "HTTP_CLUSTER_PORT",
        "MQTT_BROKER_PORT",
      ].map((k) => envOf(byApp("targets").service)[k] as string),
    };
    for (const [app, ports] of Object.entries(listens)) {
      const published = (byApp(app as DeployableApp).service.ports ?? []).map((p) => p.split(":").pop());
      expect(published.sort(), app).toEqual([...ports].sort());
    }
  });
  it("lets the templates run unchanged: the agent shares the targets' network namespace, and each template's loopback target is a port they listen on", () => {
    const targets = byApp("targets");
    const agent = byApp("agent").service;
    expect(agent.network_mode).toBe(`service:${targets.name}`);
    expect(Object.keys(agent.depends_on ?? {})).toContain(targets.name);
    // A service in another's namespace may not publish ports of its own (compose refuses it).
    expect(agent.ports).toBeUndefined();
    const env = envOf(targets.service);
    const listening = Object.entries(env).flatMap(([k, v]) => (k.endsWith("_PORT") ? [v] : []));
    for (const t of TEMPLATES) {
      const parsed = parsePlanDocument(t.yaml);
      if (!parsed.ok) throw new Error(`${t.id}: ${JSON.stringify(parsed.issues)}`);
      const url = new URL(parsed.plan.target.url);
      // Loopback is what a self-hosted install admits with no allowlist; the port must be a target's.
      expect(url.hostname, t.id).toBe("127.0.0.1");
      expect(listening, `${t.id}: ${url.port}`).toContain(url.port);
    }
  });

  it("gives web and the hub the same admission settings (mode, allowlist, quotas), from the shell or unset", () => {
    const set = {
      VOLLEY_MODE: "self-hosted",
      VOLLEY_TARGET_ALLOWLIST: "api.example.com,10.0.0.0/8",
      VOLLEY_QUOTA_CONNECTIONS: "2000",
      VOLLEY_QUOTA_RATE: "9000",
      VOLLEY_QUOTA_DURATION: "600",
    };
    for (const vars of [{}, set]) {
      const [web, hub] = (["web", "hub"] as const).map((app) => envOf(byApp(app).service, vars));
      for (const name of Object.keys(set)) {
        expect(web![name], name).toBe((vars as Record<string, string>)[name] ?? "");
        expect(hub![name], name).toBe(web![name]);
      }
      for (const app of ["web", "hub"] as const) {
        const check = checkAppEnv(app, envOf(byApp(app).service, vars));
        expect(check.ok, `${app}: ${check.output}`).toBe(true);
      }
    }
    const bad = checkAppEnv("hub", envOf(byApp("hub").service, { VOLLEY_TARGET_ALLOWLIST: "https://api.example.com:443" }));
    expect(bad.ok).toBe(false);
    expect(bad.output).toMatch(/VOLLEY_TARGET_ALLOWLIST/);
  });
});

describe("infra/docker", () => {
  it.each(APPS)("%s.Dockerfile builds from the repo root with npm ci and runs as non-root", (app) => {
    const all = readDockerfile(app);
    expect(all.some((i) => i.op === "RUN" && /\bnpm ci\b/.test(i.args))).toBe(true);
    const stages = all.filter((i) => i.op === "FROM").map((i) => /\bAS\s+(\S+)/i.exec(i.args)?.[1]);
    for (const i of all) {
      const from = /--from=(\S+)/.exec(i.args)?.[1];
      if (from) expect(stages, `COPY --from=${from}`).toContain(from);
      if (i.op === "FROM" && !/^\$\{NODE_(RUNTIME_)?IMAGE\}/.test(i.args)) expect(stages, `FROM ${i.args}`).toContain(i.args.split(/\s+/)[0]);
    }
    const final = finalStage(all);
    const user = final.filter((i) => i.op === "USER").pop()?.args;
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^(root|0)(:|$)/);

    // The command runs plain node on a file that exists in the checkout (targets, through tsx) or that
    // the build stage makes with a script of this repository (the deployables: compiled, no tsx).
    const workdir = final.filter((i) => i.op === "WORKDIR").pop()?.args as string;
    const cmd = JSON.parse(final.find((i) => i.op === "CMD")?.args ?? "null") as string[];
    expect(cmd[0]).toBe("node");
    const script = cmd.find((a) => /\.(ts|js|mjs)$/.test(a) || a.includes("/bin/")) as string;
    const builder = BUILT_BY[script];
    if (builder) {
      expect(readFileSync(path.join(repoRoot, builder.source), "utf8"), builder.source).toContain(builder.names);
      expect(
        all.some((i) => i.op === "RUN" && i.args.includes(builder.run)),
        builder.run,
      ).toBe(true);
      expect(cmd, "no TypeScript at run time").not.toContain("tsx");
    } else {
      expect(app, "only the demo targets run from the checkout").toBe("targets");
      expect(existsSync(path.join(repoPathOf(workdir), script)), `${workdir}/${script}`).toBe(true);
    }

    // Every variable the image sets is one the app reads.
    const read = envNamesRead(app);
    for (const env of final.filter((i) => i.op === "ENV")) {
      for (const [, name] of env.args.matchAll(/(?:^|\s)([A-Z][A-Z0-9_]*)=/g))
        if (!RUNTIME_VARS.has(name as string)) expect(read, `ENV ${name}`).toContain(name);
    }

    const ignore = readFileSync(path.join(infraDir, "docker", `${app}.Dockerfile.dockerignore`), "utf8");
    expect(ignore).toMatch(/^\*\*\/node_modules$/m);
    expect(ignore).toMatch(/^\.git$/m);
  });

  it.each(["web", "hub", "targets"] as const)("%s.Dockerfile has a HEALTHCHECK on a path the app serves", (app) => {
    const hc = finalStage(readDockerfile(app)).find((i) => i.op === "HEALTHCHECK");
    expect(hc).toBeDefined();
    const probe = /\/\/127\.0\.0\.1:\$\{process\.env\.([A-Z_]+)\}(\/[^`]*)`/.exec(hc!.args);
    expect(probe, hc!.args).not.toBeNull();
    expect(envNamesRead(app)).toContain(probe![1]);
    const p = probe![2] as string;
    if (app === "web") expect(existsSync(path.join(repoRoot, "apps/web/src/app", p.split("?")[0] as string, "route.ts"))).toBe(true);
    if (app === "hub") expect(readFileSync(path.join(repoRoot, "apps/hub/src/hub.ts"), "utf8")).toContain(`"${p}"`);
  });

  it("the targets HEALTHCHECK command passes against the real targets process, and fails when it is gone", async () => {
    const hc = finalStage(readDockerfile("targets")).find((i) => i.op === "HEALTHCHECK") as { args: string };
    const probe = JSON.parse(hc.args.slice(hc.args.indexOf("CMD") + 3).trim()) as string[];
    const env: Record<string, string> = { TARGETS_HOST: "127.0.0.1", HTTP_CLUSTER_WORKERS: "0" };
    for (const k of [
      "WS_ECHO_PORT",
      "SOCKETIO_ECHO_PORT",
      "SOCKJS_ECHO_PORT",
      "STOMP_ECHO_PORT",
      "HTTP_ECHO_PORT",
      "SOCKETCLUSTER_ECHO_PORT",
      "MQTT_BROKER_PORT",
    ])
      env[k] = String(await freePort());
    const runProbe = () => spawnSync(probe[0] as string, probe.slice(1), { env: { PATH: process.env.PATH, ...env }, encoding: "utf8", timeout: 30_000 }).status;
    const targets = startApp("targets", { PATH: process.env.PATH, ...env, LOG_LEVEL: "info" });
    try {
      await targets.waitFor(/sockjs echo listening/i, 60_000);
      expect(runProbe()).toBe(0);
    } finally {
      await targets.stop(10_000);
    }
    expect(runProbe()).toBe(1);
  });
});
