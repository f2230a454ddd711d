/**
 * infra/helm/volley, checked without a cluster: the variables the chart gives web and hub are
 * ones their env.ts reads, the install's mode and the secrets key reach both from one value and
 * one Secret, every mode the chart allows is accepted by the apps' real env schemas (run in a
 * child process), and the secrets key and web's AUTH_SECRET are generated when not given and kept
 * across upgrades (lookup of the release's own Secret). Where `helm` is installed
 * the chart is also rendered and the rendered Deployments are checked.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments, parse } from "yaml";
import { checkAppEnv, envNamesRead, infraDir } from "./infra-test-kit";

const chartDir = path.join(infraDir, "helm", "volley");
const read = (file: string) => readFileSync(path.join(chartDir, file), "utf8");
const values = parse(read("values.yaml")) as {
  mode: string;
  secrets: { key: string; oldKeys: string; existingSecret: string };
  agent: { token: string; existingSecret: string };
  admission: { targetAllowlist: string[] | string; quotas: Record<string, string | number> };
};
const helpers = read("templates/_helpers.tpl");
const KEY = Buffer.alloc(32, 7).toString("base64");

/** The body of `{{- define "name" -}} … {{- end -}}` in _helpers.tpl, nested blocks included. */
function defineBody(name: string): string {
  const start = helpers.indexOf(`{{- define "${name}" -}}`);
  if (start < 0) throw new Error(`_helpers.tpl defines no ${name}`);
  const actions = /\{\{-?\s*(if|range|with|define|end)\b[^}]*\}\}/g;
  actions.lastIndex = start;
  let depth = 0;
  for (let m = actions.exec(helpers); m; m = actions.exec(helpers)) {
    depth += m[1] === "end" ? -1 : 1;
    if (depth === 0) return helpers.slice(start, m.index);
  }
  throw new Error(`${name}: no matching end`);
}

/** The environment variable names a template sets, through the helpers it includes. */
function envNames(text: string, seen = new Set<string>()): Set<string> {
  const names = new Set([...text.matchAll(/^\s*- name: ([A-Z][A-Z0-9_]*)\s*$/gm)].map((m) => m[1] as string));
  for (const [, name] of text.matchAll(/include "([^"]+)"/g)) {
    if (seen.has(name!) || !helpers.includes(`define "${name}"`)) continue;
    seen.add(name!);
    for (const n of envNames(defineBody(name!), seen)) names.add(n);
  }
  return names;
}

const deployment = { web: read("templates/web-deployment.yaml"), hub: read("templates/hub-deployment.yaml") };
const modes = [...(/has \.Values\.mode \(list ((?:"[^"]+"\s*)+)\)/.exec(defineBody("volley.mode"))?.[1] ?? "").matchAll(/"([^"]+)"/g)].map(
  (m) => m[1] as string,
);
// Where the chart sets each admission variable from (admission.*); web and hub read them through @volley/admission.
const ADMISSION = {
  VOLLEY_TARGET_ALLOWLIST: "targetAllowlist",
  VOLLEY_QUOTA_CONNECTIONS: "connections",
  VOLLEY_QUOTA_RATE: "messagesPerSecond",
  VOLLEY_QUOTA_DURATION: "durationSeconds",
} as const;
const stores = { DATABASE_URL: "postgres://volley:pw@db.example.com:5432/volley", REDIS_URL: "redis://redis.example.com:6379", LOG_LEVEL: "info" };
// What the chart always gives each app besides: web its AUTH_SECRET (given or generated, web-secret.yaml).
const chartSecrets = { web: { AUTH_SECRET: "g".repeat(48) }, hub: {} } as const;

describe("infra/helm/volley", () => {
  it.each(["web", "hub"] as const)("gives %s VOLLEY_MODE, VOLLEY_SECRETS_KEY(_OLD) and the admission variables, and only variables it reads", (app) => {
    const names = envNames(deployment[app]);
    expect([...names]).toEqual(expect.arrayContaining(["VOLLEY_MODE", "VOLLEY_SECRETS_KEY", "VOLLEY_SECRETS_KEY_OLD", ...Object.keys(ADMISSION)]));
    const readByApp = envNamesRead(app);
    for (const name of names) expect(readByApp, `${app} does not read ${name} (apps/${app}/src/env.ts)`).toContain(name);
  });

  it("takes the mode from one value for both, and the key from one Secret for both, rolling the pods when it changes", () => {
    const env = defineBody("volley.modeAndSecretsEnv");
    expect(env).toMatch(/- name: VOLLEY_MODE\s+value: \{\{ include "volley\.mode" \. \| quote \}\}/);
    expect(env).toMatch(
      /- name: VOLLEY_SECRETS_KEY\s+valueFrom:\s+secretKeyRef: \{ name: \{\{ include "volley\.secretsSecret" \. \}\}, key: VOLLEY_SECRETS_KEY \}/,
    );
    expect(env).toMatch(
      /- name: VOLLEY_SECRETS_KEY_OLD\s+valueFrom:\s+secretKeyRef: \{ name: \{\{ include "volley\.secretsSecret" \. \}\}, key: VOLLEY_SECRETS_KEY_OLD, optional: true \}/,
    );
    expect(defineBody("volley.mode")).toContain(".Values.mode");
    for (const [app, text] of Object.entries(deployment)) {
      expect(text, app).toContain('{{- include "volley.modeAndSecretsEnv" . | nindent 12 }}');
      expect(text, `${app}: checksum/secrets covers the key's Secret`).toMatch(/checksum\/secrets: .*secrets-secret\.yaml/);
    }
  });

  it("sets the admission variables once (admission.*) for both, defaults when empty, and refuses them in extraEnv", () => {
    const env = defineBody("volley.admissionEnv");
    for (const [name, key] of Object.entries(ADMISSION)) {
      const from = name === "VOLLEY_TARGET_ALLOWLIST" ? /\$allow/ : new RegExp(`include "volley\\.number" \\.${key} \\| quote`);
      expect(env, name).toMatch(new RegExp(`- name: ${name}\\s+value: \\{\\{ ${from.source}`));
    }
    expect(env).toContain(".Values.admission.targetAllowlist");
    expect(env).toContain("with .Values.admission.quotas");
    // A list is joined into the comma list the apps read.
    expect(env).toMatch(/if kindIs "slice" \$allow \}\}\s+\{\{- \$allow = join "," \$allow \}\}/);
    // The same variable in either extraEnv fails the render, naming where it belongs.
    expect(env).toMatch(/range \$app := list "web" "hub"/);
    expect(env).toMatch(/hasKey \(index \$\.Values \$app\)\.extraEnv \$name/);
    expect(env).toMatch(/fail \(printf "%s\.extraEnv\.%s: set it in admission/);
    for (const name of Object.keys(ADMISSION)) expect(env).toContain(`"${name}"`);
    for (const [app, text] of Object.entries(deployment)) expect(text, app).toContain('{{- include "volley.admissionEnv" . | nindent 12 }}');
    // Empty by default: the apps' built-in defaults apply.
    expect(values.admission).toEqual({ targetAllowlist: [], quotas: { connections: "", messagesPerSecond: "", durationSeconds: "" } });
  });

  it("renders admission values the apps accept, and the apps refuse a bad one naming it", () => {
    const admission = {
      VOLLEY_TARGET_ALLOWLIST: "api.example.com,*.staging.example.com,10.0.0.0/8",
      VOLLEY_QUOTA_CONNECTIONS: "1000000", // volley.number: not 1e+06
      VOLLEY_QUOTA_RATE: "20000",
      VOLLEY_QUOTA_DURATION: "600",
    };
    for (const app of ["web", "hub"] as const) {
      const check = checkAppEnv(app, { ...stores, ...chartSecrets[app], ...admission });
      expect(check.ok, `${app}: ${check.output}`).toBe(true);
      const bad = checkAppEnv(app, { ...stores, ...chartSecrets[app], ...admission, VOLLEY_QUOTA_RATE: "0" });
      expect(bad.ok, app).toBe(false);
      expect(bad.output, app).toContain("VOLLEY_QUOTA_RATE");
    }
  });

  it("generates secrets.key and web's AUTH_SECRET when not given, kept across upgrades and uninstall, unless an existing Secret is named", () => {
    // The given value, else the value the release's Secret already holds (lookup), else the new random one.
    const kept = defineBody("volley.keptSecret");
    expect(kept).toMatch(/\$value := \.given/);
    expect(kept).toMatch(/lookup "v1" "Secret" \.root\.Release\.Namespace \.secret/);
    expect(kept).toMatch(/hasKey \$data \.key -\}\}\s+\{\{- \$value = index \$data \.key \| b64dec/);
    expect(kept).toMatch(/\{\{- else -\}\}\s+\{\{- \$value = \.new/);
    const secret = read("templates/secrets-secret.yaml");
    expect(secret).toMatch(/^\{\{- if not \.Values\.secrets\.existingSecret \}\}\n\{\{- \$name := include "volley\.secretsSecret" \. \}\}/);
    // 32 random bytes in base64, as VOLLEY_SECRETS_KEY must be.
    expect(secret).toMatch(
      /VOLLEY_SECRETS_KEY: \{\{ include "volley\.keptSecret" \(dict "root" \. "secret" \$name "key" "VOLLEY_SECRETS_KEY" "given" \.Values\.secrets\.key "new" \(randAlphaNum 32 \| b64enc\)\) \| quote \}\}/,
    );
    expect(secret).toMatch(/VOLLEY_SECRETS_KEY_OLD: \{\{ \.Values\.secrets\.oldKeys \| quote \}\}/);
    const web = read("templates/web-secret.yaml");
    expect(web).toMatch(/^\{\{- if not \.Values\.web\.authExistingSecret \}\}/);
    expect(web).toMatch(/\{\{- \$name := include "volley\.webSecret" \. \}\}/);
    expect(web).toMatch(
      /AUTH_SECRET: \{\{ include "volley\.keptSecret" \(dict "root" \. "secret" \$name "key" "AUTH_SECRET" "given" \.Values\.web\.authSecret "new" \(randAlphaNum 48\)\) \| quote \}\}/,
    );
    expect(web).toMatch(/lt \(len \.Values\.web\.authSecret\) 32/);
    // A lost key makes every sealed secret unreadable, a lost AUTH_SECRET signs everyone out.
    for (const text of [secret, web]) expect(text).toMatch(/annotations:\n(\s+#.*\n)?\s+helm\.sh\/resource-policy: keep/);
    // The secret each Secret holds is the one the apps read.
    expect(defineBody("volley.secretsSecret")).toContain(".Values.secrets.existingSecret");
    expect(defineBody("volley.webSecret")).toContain(".Values.web.authExistingSecret");
    expect(deployment.web).toMatch(
      /\n\s+- name: AUTH_SECRET\n\s+valueFrom:\n\s+secretKeyRef: \{ name: \{\{ include "volley\.webSecret" \. \}\}, key: AUTH_SECRET \}/,
    );
    // Set unconditionally: not inside an `if` (before, an unset authSecret left web without one).
    expect(deployment.web).not.toMatch(/if[^}]*authSecret/);
    // No key ships in the chart, like no agent token does.
    expect(values.secrets).toEqual({ key: "", oldKeys: "", existingSecret: "" });
    expect(values.agent.token).toBe("");
  });

  it("allows exactly the modes web and hub accept, self-hosted by default; hosted needs the key", () => {
    // And web needs AUTH_SECRET in every mode (nothing derives one), which the chart therefore always gives.
    const noSecret = checkAppEnv("web", { ...stores, VOLLEY_SECRETS_KEY: KEY });
    expect(noSecret.ok).toBe(false);
    expect(noSecret.output).toContain("AUTH_SECRET is not set");
    expect(modes.sort()).toEqual(["hosted", "self-hosted"]);
    expect(values.mode).toBe("self-hosted");
    for (const mode of modes) {
      for (const app of ["web", "hub"] as const) {
        const check = checkAppEnv(app, { ...stores, ...chartSecrets[app], VOLLEY_MODE: mode, VOLLEY_SECRETS_KEY: KEY, VOLLEY_SECRETS_KEY_OLD: "" });
        expect(check.ok, `${app} in ${mode} mode: ${check.output}`).toBe(true);
      }
    }
    // Why the chart always gives the key: without it, a hosted web and hub refuse to start, naming it.
    for (const app of ["web", "hub"] as const) {
      const check = checkAppEnv(app, { ...stores, AUTH_SECRET: "x".repeat(40), VOLLEY_MODE: "hosted" });
      expect(check.ok, app).toBe(false);
      expect(check.output, app).toContain("VOLLEY_SECRETS_KEY");
    }
  });

  it("gives web a memory limit above its measured peak (1.16 GB resident under the API fuzz load), with headroom", () => {
    const limit = (parse(read("values.yaml")) as { web: { resources: { limits: { memory: string } } } }).web.resources.limits.memory;
    const m = /^(\d+)(Mi|Gi)$/.exec(limit);
    expect(m, `web.resources.limits.memory ${limit}: give it in Mi or Gi`).not.toBeNull();
    const bytes = Number(m![1]) * 2 ** (m![2] === "Gi" ? 30 : 20);
    expect(bytes).toBeGreaterThanOrEqual(1.16e9 * 1.25);
  });

  const helm = spawnSync("helm", ["version", "--short"], { encoding: "utf8" }).status === 0;
  it.skipIf(!helm)("renders with helm: both Deployments get the mode and the Secret's key; no key or AUTH_SECRET given: generated; a bad mode fails", () => {
    const template = (...set: string[]) =>
      spawnSync(
        "helm",
        [
          "template",
          "volley",
          chartDir,
          ...["stores.databaseUrl=postgres://d", "stores.redisUrl=redis://r", "agent.token=a-long-agent-token", ...set].flatMap((s) => ["--set", s]),
        ],
        { encoding: "utf8" },
      );
    expect(template(`secrets.key=${KEY}`, "web.authSecret=short").stderr).toMatch(/web\.authSecret must be at least 32 characters/);
    const ok = template(
      `secrets.key=${KEY}`,
      "mode=hosted",
      `web.authSecret=${"x".repeat(40)}`,
      "admission.targetAllowlist={api.example.com,10.0.0.0/8}",
      "admission.quotas.connections=1000000",
      "admission.quotas.durationSeconds=600",
    );
    expect(ok.status, ok.stderr).toBe(0);
    const docs = parseAllDocuments(ok.stdout)
      .map((d) => d.toJS())
      .filter(Boolean) as Array<{
      kind: string;
      metadata: { name: string };
      stringData?: Record<string, string>;
      spec?: {
        template: {
          spec: {
            containers: Array<{ name: string; env: Array<{ name: string; value?: string; valueFrom?: { secretKeyRef: { name: string; key: string } } }> }>;
          };
        };
      };
    }>;
    const secret = docs.find((d) => d.kind === "Secret" && d.stringData?.VOLLEY_SECRETS_KEY);
    expect(secret?.stringData?.VOLLEY_SECRETS_KEY).toBe(KEY);
    for (const app of ["web", "hub"]) {
      const env = docs.find((d) => d.kind === "Deployment" && d.metadata.name.endsWith(`-${app}`))!.spec!.template.spec.containers[0]!.env;
      expect(env.find((e) => e.name === "VOLLEY_MODE")?.value, app).toBe("hosted");
      expect(env.find((e) => e.name === "VOLLEY_SECRETS_KEY")?.valueFrom?.secretKeyRef, app).toEqual({
        name: secret!.metadata.name,
        key: "VOLLEY_SECRETS_KEY",
      });
      const admission = Object.fromEntries(env.filter((e) => e.name in ADMISSION).map((e) => [e.name, e.value]));
      // Unset messagesPerSecond: left out, so the app's default applies.
      expect(admission, app).toEqual({
        VOLLEY_TARGET_ALLOWLIST: "api.example.com,10.0.0.0/8",
        VOLLEY_QUOTA_CONNECTIONS: "1000000",
        VOLLEY_QUOTA_DURATION: "600",
      });
    }
    expect(template(`secrets.key=${KEY}`, "hub.extraEnv.VOLLEY_QUOTA_RATE=5").stderr).toMatch(/hub\.extraEnv\.VOLLEY_QUOTA_RATE: set it in admission/);
    // Nothing given: both generated (helm template cannot look up, so each render makes new ones).
    const generated = template();
    expect(generated.status, generated.stderr).toBe(0);
    const stringData = parseAllDocuments(generated.stdout).map((d) => (d.toJS()?.stringData ?? {}) as Record<string, string>);
    const data: Record<string, string> = Object.assign({}, ...stringData);
    expect(Buffer.from(data.VOLLEY_SECRETS_KEY ?? "", "base64")).toHaveLength(32);
    expect(data.AUTH_SECRET).toMatch(/^[A-Za-z0-9]{48}$/);
    expect(template(`secrets.key=${KEY}`, "mode=saas").stderr).toMatch(/mode must be self-hosted or hosted/);
    expect(template("secrets.existingSecret=mine").status).toBe(0);
  });
});
