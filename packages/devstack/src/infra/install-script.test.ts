/**
 * infra/agent/install.sh, run for real in a throwaway root (VOLLEY_INSTALL_ROOT): real bash, real
 * npm installing a package tarball, real useradd/userdel on the root's /etc files. Only systemd is
 * a stand-in — a `systemctl` on PATH that records its calls — since a test cannot own PID 1.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { repoRoot } from "../env";
import { freePort } from "../free-port";
import { checkAppEnv, infraDir, parseEnvFile } from "./infra-test-kit";

const installer = path.join(infraDir, "agent", "install.sh");
const SHELLCHECK = "/usr/bin/shellcheck";
const TOKEN = "vjt_first_0123456789abcdef";
const NEW_TOKEN = "vjt_second_fedcba9876543210";
// useradd/chown of the service user need root; the installer itself refuses to run without it.
const isRoot = process.getuid?.() === 0;
// Where a real sudo is installed the not-root cases cannot take it off PATH: they skip.
const hasSudo = ["/usr/bin/sudo", "/bin/sudo", "/usr/sbin/sudo"].some((p) => existsSync(p));
if (!isRoot) console.warn("install-script.test: skipping the installer runs — they need root (useradd, chown)");

let work: string;
let tarball: string;

beforeAll(() => {
  work = mkdtempSync(path.join(tmpdir(), "volley-install-"));
  // A package shaped like @volley/agent (a volley-agent bin), packed by npm: the installer's npm
  // step runs for real and offline. The real package cannot be packed from the workspace.
  const pkg = path.join(work, "pkg");
  mkdirSync(path.join(pkg, "bin"), { recursive: true });
  writeFileSync(
    path.join(pkg, "package.json"),
    JSON.stringify({ name: "@volley/agent", version: "0.0.0-test", bin: { "volley-agent": "bin/volley-agent.js" } }),
  );
  // Its `check` answers like the real one: a hub URL containing "refuse" or "down" stands for a hub
  // that refuses the token or does not answer (the real check runs against a real hub in
  // apps/agent hub-check.test and e2e netns-installer); `daemon` prints what it was started with.
  writeFileSync(
    path.join(pkg, "bin", "volley-agent.js"),
    `#!/usr/bin/env node
const [cmd] = process.argv.slice(2);
const hub = process.env.HUB_URL || "";
if (cmd === "check") {
  if (hub.includes("refuse")) { console.error("volley-agent check: the hub refused this agent: invalid agent token"); process.exit(2); }
  if (hub.includes("down")) { console.error("volley-agent check: the hub at " + hub + " did not answer (ECONNREFUSED)"); process.exit(3); }
  console.log("volley-agent check: the hub at " + hub + " accepted agent " + (process.env.AGENT_NAME || "?"));
  process.exit(0);
}
console.log("agent " + cmd + " hub=" + hub + " state=" + process.env.AGENT_STATE_DIR + " token=" + (process.env.AGENT_TOKEN ? "set" : "unset"));
`,
  );
  const packed = spawnSync("npm", ["pack", "--silent", "--pack-destination", work], { cwd: pkg, encoding: "utf8" });
  expect(packed.status, packed.stderr).toBe(0);
  tarball = path.join(work, packed.stdout.trim().split("\n").pop() as string);
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

/**
 * Serves `dir` over HTTP the way web serves the agent package, from a process of its own (the
 * installer runs through spawnSync, which blocks this one's event loop).
 */
async function fileServer(dir: string): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const script = `
    const http = require("node:http"), fs = require("node:fs"), path = require("node:path");
    http.createServer((req, res) => {
      const file = path.join(${JSON.stringify(dir)}, path.basename(req.url));
      if (!fs.existsSync(file)) { res.writeHead(404); return res.end(); }
      res.writeHead(200); res.end(fs.readFileSync(file));
    }).listen(${port}, "127.0.0.1", () => console.log("ready"));`;
  const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once("data", () => resolve());
    child.once("exit", (code) => reject(new Error(`file server exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, child };
}

interface Sandbox {
  root: string;
  bin: string;
  calls: () => string[];
  run: (args: string[], opts?: { env?: Record<string, string>; input?: string }) => { code: number | null; out: string };
}

let seq = 0;
function sandbox(): Sandbox {
  const dir = path.join(work, `box-${++seq}`);
  const root = path.join(dir, "root");
  const bin = path.join(dir, "bin");
  mkdirSync(path.join(root, "etc"), { recursive: true });
  mkdirSync(path.join(root, "run", "systemd", "system"), { recursive: true });
  mkdirSync(bin);
  writeFileSync(path.join(root, "etc", "passwd"), "root:x:0:0:root:/root:/bin/bash\n");
  writeFileSync(path.join(root, "etc", "group"), "root:x:0:\n");
  writeFileSync(path.join(root, "etc", "shadow"), "root:*:19000:0:99999:7:::\n", { mode: 0o600 });
  writeFileSync(path.join(root, "etc", "gshadow"), "root:*::\n", { mode: 0o600 });
  const log = path.join(dir, "systemctl.log");
  const state = path.join(dir, "systemd-state");
  writeFileSync(log, "");
  // Records every call and keeps enabled/active state the way systemd would answer the queries.
  writeFileSync(
    path.join(bin, "systemctl"),
    `#!/bin/sh
echo "$*" >> "${log}"
case "$1" in
  is-enabled) [ -f "${state}.enabled" ] ;;
  is-active) [ -f "${state}.active" ] ;;
  enable) touch "${state}.enabled" ;;
  start|restart) touch "${state}.active" ;;
  disable) rm -f "${state}.enabled" "${state}.active" ;;
  *) exit 0 ;;
esac
`,
  );
  // FAKE_UID answers `id -u` for the not-root case; everything else is the real id.
  writeFileSync(path.join(bin, "id"), `#!/bin/sh\nif [ "$*" = "-u" ] && [ -n "$FAKE_UID" ]; then echo "$FAKE_UID"; exit 0; fi\nexec /usr/bin/id "$@"\n`);
  chmodSync(path.join(bin, "systemctl"), 0o755);
  chmodSync(path.join(bin, "id"), 0o755);
  let seen = 0;
  return {
    root,
    bin,
    // Calls since the previous calls(): each step's own.
    calls: () => {
      const all = readFileSync(log, "utf8").split("\n").filter(Boolean);
      const mine = all.slice(seen);
      seen = all.length;
      return mine;
    },
    run: (args, opts = {}) => {
      const res = spawnSync("bash", [installer, ...args], {
        env: {
          PATH: `${bin}:${process.env.PATH}`,
          HOME: dir,
          npm_config_cache: path.join(work, "npm-cache"),
          VOLLEY_INSTALL_ROOT: root,
          ...opts.env,
        },
        input: opts.input,
        encoding: "utf8",
        timeout: 120_000,
      });
      return { code: res.status, out: `${res.stdout}${res.stderr}` };
    },
  };
}

const baseArgs = (token = TOKEN) => ["--token", token, "--hub", "http://127.0.0.1:3001/", "--pool", "eu-west", "--name", "load gen 1", "--package", tarball];
const serviceUser = (root: string) =>
  readFileSync(path.join(root, "etc", "passwd"), "utf8")
    .split("\n")
    .find((l) => l.startsWith("volley-agent:"));
const mutating = (calls: string[]) => calls.filter((c) => !/^is-(enabled|active)\b/.test(c));

type RefusalCase = [string, (b: Sandbox) => { args: string[]; env?: Record<string, string> }, RegExp];
const notRootNoSudo: RefusalCase = [
  "not root, and no sudo",
  () => ({ args: baseArgs(), env: { FAKE_UID: "1000" } }),
  /must run as root.*sudo is not installed here/,
];

describe.skipIf(!isRoot)("infra/agent/install.sh", () => {
  let box: Sandbox;
  beforeEach(() => {
    box = sandbox();
  });

  it("installs the package, a system user, a 0600 env file and a hardened unit, then enables and starts it", () => {
    const { code, out } = box.run(baseArgs());
    expect(code, out).toBe(0);
    expect(out).not.toContain(TOKEN);

    const user = serviceUser(box.root);
    expect(user).toMatch(/^volley-agent:x:\d+:\d+::\/var\/lib\/volley-agent:\/usr\/sbin\/nologin$/);
    const uid = Number(user?.split(":")[2]);

    const envPath = path.join(box.root, "etc", "volley", "agent.env");
    const st = statSync(envPath);
    expect(st.mode & 0o777).toBe(0o600);
    expect(st.uid).toBe(uid);
    const env = parseEnvFile(readFileSync(envPath, "utf8"));
    expect(env).toEqual({ HUB_URL: "http://127.0.0.1:3001", AGENT_TOKEN: TOKEN, AGENT_POOL: "eu-west", AGENT_NAME: "load gen 1" });
    // The file is what the agent's own env.ts accepts.
    const check = checkAppEnv("agent", env);
    expect(check.ok, check.output).toBe(true);

    const unit = readFileSync(path.join(box.root, "etc", "systemd", "system", "volley-agent.service"), "utf8");
    for (const line of [
      "User=volley-agent",
      "EnvironmentFile=/etc/volley/agent.env",
      "NoNewPrivileges=yes",
      "ProtectSystem=strict",
      "Restart=always",
      "WantedBy=multi-user.target",
    ]) {
      expect(unit).toContain(`\n${line}\n`);
    }
    expect(Number(/\nLimitNOFILE=(\d+)\n/.exec(unit)?.[1])).toBeGreaterThanOrEqual(65_536);
    expect(unit).toMatch(/\nExecStart=\/\S*node \/opt\/volley-agent\/bin\/volley-agent daemon\n/);
    expect(unit).not.toContain(TOKEN);
    expect(existsSync(path.join(box.root, "opt", "volley-agent", "bin", "volley-agent"))).toBe(true);

    // The hub was asked first, with the agent itself.
    expect(out).toContain("the hub at http://127.0.0.1:3001 accepted agent load gen 1");
    const calls = box.calls();
    expect(mutating(calls)).toEqual(["daemon-reload", "enable volley-agent.service", "restart volley-agent.service"]);
    expect(calls.join("\n")).not.toContain(TOKEN);
  });

  it("--package-url: downloads web's agent package, checks it against its .sha256, installs it; refuses a download that does not match", async () => {
    const served = path.join(work, `served-${seq}`);
    mkdirSync(served);
    writeFileSync(path.join(served, "volley-agent.tgz"), readFileSync(tarball));
    const sha = createHash("sha256").update(readFileSync(tarball)).digest("hex");
    writeFileSync(path.join(served, "volley-agent.tgz.sha256"), `${sha}  volley-agent.tgz\n`);
    const server = await fileServer(served);
    try {
      const url = `${server.url}/volley-agent.tgz`;
      const args = [...baseArgs().slice(0, -2), "--package-url", url];
      const first = box.run(args);
      expect(first.code, first.out).toBe(0);
      expect(first.out).toContain(`installed ${url}`);
      expect(existsSync(path.join(box.root, "opt", "volley-agent", "bin", "volley-agent"))).toBe(true);
      expect(readFileSync(path.join(box.root, "opt", "volley-agent", ".installed-package"), "utf8")).toBe(`${url} sha256:${sha}\n`);

      // The same package again: only its checksum is fetched, and nothing changes.
      const again = box.run(args);
      expect(again.code, again.out).toBe(0);
      expect(again.out).toContain("nothing changed");
      expect(again.out).not.toContain("downloading");

      // A package that no longer matches its checksum (cut short, or changed on the way) is refused.
      writeFileSync(path.join(served, "volley-agent.tgz.sha256"), `${"0".repeat(64)}  volley-agent.tgz\n`);
      const bad = box.run(args);
      expect(bad.code).toBe(1);
      expect(bad.out).toMatch(/does not match its checksum \(sha256 [0-9a-f]{64}, expected 0{64}\)/);
      expect(bad.out).not.toContain(TOKEN);

      // And no package at that URL: the error names the flag.
      const missing = box.run([...baseArgs().slice(0, -2), "--package-url", `${server.url}/nothing.tgz`]);
      expect(missing.code).toBe(1);
      expect(missing.out).toMatch(/could not download .*nothing\.tgz\.sha256; check --package-url/);
    } finally {
      server.child.kill();
    }
  });

  it("changes nothing on a second run with the same arguments, and says so", () => {
    expect(box.run(baseArgs()).code).toBe(0);
    box.calls();
    const envPath = path.join(box.root, "etc", "volley", "agent.env");
    const before = statSync(envPath).mtimeMs;
    const { code, out } = box.run(baseArgs());
    expect(code, out).toBe(0);
    expect(out).toContain("already installed and up to date; nothing changed");
    expect(mutating(box.calls())).toEqual([]);
    expect(statSync(envPath).mtimeMs).toBe(before);
  });

  it("rotates the token: rewrites the env file and restarts the agent, without printing either token", () => {
    expect(box.run(baseArgs()).code).toBe(0);
    box.calls();
    const { code, out } = box.run(baseArgs(NEW_TOKEN));
    expect(code, out).toBe(0);
    expect(out).toContain("new token");
    expect(out).not.toContain(NEW_TOKEN);
    expect(out).not.toContain(TOKEN);
    const env = parseEnvFile(readFileSync(path.join(box.root, "etc", "volley", "agent.env"), "utf8"));
    expect(env.AGENT_TOKEN).toBe(NEW_TOKEN);
    // The unit did not change, so no daemon-reload; the package did not change, so no npm.
    expect(mutating(box.calls())).toEqual(["restart volley-agent.service"]);
    expect(out).not.toContain("installing");
  });

  it("reads the token from stdin with --token -", () => {
    const args = baseArgs();
    args[1] = "-";
    const { code, out } = box.run(args, { input: `${TOKEN}\n` });
    expect(code, out).toBe(0);
    expect(parseEnvFile(readFileSync(path.join(box.root, "etc", "volley", "agent.env"), "utf8")).AGENT_TOKEN).toBe(TOKEN);
  });

  it("uninstalls the unit, env file, package, state and user; a second uninstall has nothing to do", () => {
    expect(box.run(baseArgs()).code).toBe(0);
    box.calls();
    const { code, out } = box.run(["--uninstall"]);
    expect(code, out).toBe(0);
    expect(mutating(box.calls())).toEqual(["disable --now volley-agent.service", "daemon-reload"]);
    expect(existsSync(path.join(box.root, "etc", "systemd", "system", "volley-agent.service"))).toBe(false);
    expect(existsSync(path.join(box.root, "etc", "volley"))).toBe(false);
    expect(existsSync(path.join(box.root, "opt", "volley-agent"))).toBe(false);
    expect(existsSync(path.join(box.root, "var", "lib", "volley-agent"))).toBe(false);
    expect(serviceUser(box.root)).toBeUndefined();
    expect(readFileSync(path.join(box.root, "etc", "group"), "utf8")).not.toMatch(/^volley-agent:/m);

    const again = box.run(["--uninstall"]);
    expect(again.code, again.out).toBe(0);
    expect(again.out).toContain("nothing to remove");
    expect(mutating(box.calls())).toEqual([]);
  });

  const nodeStandIn = (bin: string, version: string) => {
    writeFileSync(path.join(bin, "node"), `#!/bin/sh\necho ${version}\n`);
    chmodSync(path.join(bin, "node"), 0o755);
  };

  it.each<RefusalCase>([
    ["no token", () => ({ args: ["--hub", "http://hub:3001", "--package", tarball] }), /--token is required/],
    ["an empty --token value", () => ({ args: ["--hub", "http://hub:3001", "--token"] }), /--token needs a value/],
    ["a token with spaces", () => ({ args: ["--token", "abc def ghi jkl", "--hub", "http://hub:3001"] }), /--token does not look like a join token/],
    ["no hub", () => ({ args: ["--token", TOKEN] }), /--hub is required.*--hub https:\/\/volley\.example\.com\/hub/],
    ["no package", () => ({ args: ["--token", TOKEN, "--hub", "http://hub:3001"] }), /--package-url is required.*\/agent\/volley-agent\.tgz/],
    [
      "a package URL that is not http(s)",
      () => ({ args: ["--token", TOKEN, "--hub", "http://hub:3001", "--package-url", "file:///tmp/x.tgz"] }),
      /--package-url "file:\/\/\/tmp\/x\.tgz" is not an http\(s\) URL/,
    ],
    [
      "a hub that is not http(s)",
      () => ({ args: ["--token", TOKEN, "--hub", "ftp://hub.example.com"] }),
      /--hub "ftp:\/\/hub\.example\.com" is not an http\(s\) URL/,
    ],
    ["a bad pool", () => ({ args: ["--token", TOKEN, "--hub", "http://hub:3001", "--pool", "EU West"] }), /--pool "EU West" is not a pool name/],
    ["bad labels", () => ({ args: ["--token", TOKEN, "--hub", "http://hub:3001", "--labels", "region"] }), /--labels entry "region" is not key=value/],
    ["an unknown flag", () => ({ args: ["--token", TOKEN, "--hub", "http://hub:3001", "--colour", "red"] }), /unknown option --colour/],
    ...(hasSudo ? [] : [notRootNoSudo]),
    [
      "a hub that refuses the token",
      () => ({ args: ["--token", TOKEN, "--hub", "http://refuse.example:3000/hub", "--package", tarball] }),
      /the hub refused this agent: invalid agent token — nothing was installed or changed/,
    ],
    [
      "a hub that does not answer",
      () => ({ args: ["--token", TOKEN, "--hub", "http://down.example:3000/hub", "--package", tarball] }),
      /did not answer \(ECONNREFUSED\) — nothing was installed or changed/,
    ],
    ["Node.js older than 20", (b) => (nodeStandIn(b.bin, "18.19.1"), { args: baseArgs() }), /Node\.js 20 or newer is required, found 18\.19\.1/],
  ])("refuses %s with an error naming the fix, and installs nothing", (_label, setup, message) => {
    const { args, env } = setup(box);
    const { code, out } = box.run(args, { env });
    expect(code).toBe(1);
    expect(out).toMatch(message);
    expect(out).not.toContain(TOKEN);
    expect(existsSync(path.join(box.root, "etc", "volley"))).toBe(false);
    expect(existsSync(path.join(box.root, "etc", "systemd", "system", "volley-agent.service"))).toBe(false);
    expect(existsSync(path.join(box.root, "opt", "volley-agent"))).toBe(false);
    expect(existsSync(path.join(box.root, "var", "lib", "volley-agent"))).toBe(false);
    expect(serviceUser(box.root)).toBeUndefined();
    expect(mutating(box.calls())).toEqual([]);
  });

  it("upgrades in place: a new package replaces the old one and restarts the agent, settings kept", () => {
    expect(box.run(baseArgs()).code).toBe(0);
    box.calls();
    // The next version of the package, packed the same way.
    const next = path.join(work, `next-${seq}`);
    mkdirSync(path.join(next, "bin"), { recursive: true });
    writeFileSync(
      path.join(next, "package.json"),
      JSON.stringify({ name: "@volley/agent", version: "0.0.1-test", bin: { "volley-agent": "bin/volley-agent.js" } }),
    );
    writeFileSync(path.join(next, "bin", "volley-agent.js"), readFileSync(path.join(work, "pkg", "bin", "volley-agent.js")));
    const packed = spawnSync("npm", ["pack", "--silent", "--pack-destination", next], { cwd: next, encoding: "utf8" });
    expect(packed.status, packed.stderr).toBe(0);
    const newer = path.join(next, packed.stdout.trim().split("\n").pop() as string);
    const { code, out } = box.run([...baseArgs().slice(0, -1), newer]);
    expect(code, out).toBe(0);
    expect(out).toContain(`installed ${newer}`);
    const installed = JSON.parse(readFileSync(path.join(box.root, "opt", "volley-agent", "lib", "node_modules", "@volley", "agent", "package.json"), "utf8"));
    expect(installed.version).toBe("0.0.1-test");
    expect(existsSync(path.join(box.root, "opt", "volley-agent.new"))).toBe(false);
    expect(existsSync(path.join(box.root, "opt", "volley-agent.old"))).toBe(false);
    expect(mutating(box.calls())).toEqual(["restart volley-agent.service"]);
  });

  it("an upgrade the hub refuses leaves the installed agent and its settings as they were", () => {
    expect(box.run(baseArgs()).code).toBe(0);
    box.calls();
    const envPath = path.join(box.root, "etc", "volley", "agent.env");
    const before = readFileSync(envPath, "utf8");
    const { code, out } = box.run(["--token", NEW_TOKEN, "--hub", "http://refuse.example:3000/hub", "--package", tarball]);
    expect(code).toBe(1);
    expect(out).toContain("nothing was installed or changed");
    expect(readFileSync(envPath, "utf8")).toBe(before);
    expect(existsSync(path.join(box.root, "opt", "volley-agent", "bin", "volley-agent"))).toBe(true);
    expect(mutating(box.calls())).toEqual([]);
  });

  it("without systemd (a container, WSL): installs with a launcher, prints the one command to run, and that command runs the agent", () => {
    rmSync(path.join(box.root, "run", "systemd"), { recursive: true });
    const { code, out } = box.run(baseArgs());
    expect(code, out).toBe(0);
    expect(out).toContain("systemd is not running here");
    expect(out).not.toContain(TOKEN);
    // The command is printed on a line of its own, indented, as a user copies it.
    const command = /\n {4}(\S+)\n/.exec(out)?.[1];
    expect(command, out).toBe(path.join(box.root, "opt", "volley-agent", "run-agent"));
    expect(existsSync(path.join(box.root, "etc", "systemd", "system", "volley-agent.service"))).toBe(false);
    expect(serviceUser(box.root)).toBeUndefined();
    const env = parseEnvFile(readFileSync(path.join(box.root, "etc", "volley", "agent.env"), "utf8"));
    expect(env.AGENT_STATE_DIR).toBe(path.join(box.root, "var", "lib", "volley-agent"));
    expect(checkAppEnv("agent", env).ok).toBe(true);
    const started = spawnSync(command!, [], { encoding: "utf8", env: { PATH: process.env.PATH } });
    expect(started.status, started.stderr).toBe(0);
    expect(started.stdout).toBe(`agent daemon hub=http://127.0.0.1:3001 state=${path.join(box.root, "var", "lib", "volley-agent")} token=set\n`);
    // Again: nothing changed, and the command is printed again.
    const again = box.run(baseArgs());
    expect(again.out).toContain("nothing changed");
    expect(again.out).toContain(command!);
    expect(box.calls()).toEqual([]);
  });

  it.skipIf(hasSudo)("not root: asks sudo, which runs the whole script as root", () => {
    writeFileSync(
      path.join(box.bin, "sudo"),
      `#!/bin/sh
[ "$1" = "--" ] && shift
echo "sudo $1" >> "${path.join(box.root, "..", "sudo.log")}"
FAKE_UID= exec "$@"
`,
    );
    chmodSync(path.join(box.bin, "sudo"), 0o755);
    const { code, out } = box.run(baseArgs(), { env: { FAKE_UID: "1000" } });
    expect(code, out).toBe(0);
    expect(out).toContain("not root: asking sudo");
    expect(readFileSync(path.join(box.root, "..", "sudo.log"), "utf8")).toBe("sudo bash\n");
    expect(existsSync(path.join(box.root, "etc", "systemd", "system", "volley-agent.service"))).toBe(true);
    expect(out).not.toContain(TOKEN);
  });
});

/** Every shell script under infra/: *.sh files and files with a sh/bash shebang. */
function shellScripts(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...shellScripts(p));
    else if (entry.name.endsWith(".sh") || /^#!.*\b(ba)?sh\b/.test(readFileSync(p, "utf8").split("\n", 1)[0] ?? "")) out.push(p);
  }
  return out;
}

const hasShellcheck = existsSync(SHELLCHECK);
if (!hasShellcheck) console.warn(`install-script.test: skipping shellcheck — ${SHELLCHECK} is not installed (apt-get install shellcheck)`);

describe("infra and bench shell scripts", () => {
  it.skipIf(!hasShellcheck)("pass shellcheck", () => {
    const scripts = [...shellScripts(infraDir), ...shellScripts(path.join(repoRoot, "bench", "vm"))];
    expect(scripts).toContain(installer);
    expect(scripts).toContain(path.join(repoRoot, "bench", "vm", "run.sh"));
    const res = spawnSync(SHELLCHECK, ["--external-sources", ...scripts], { encoding: "utf8" });
    expect(res.status, res.stdout + res.stderr).toBe(0);
  });
});
