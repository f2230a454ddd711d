import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

/** One "host": a network namespace joined to the root namespace's bridge. */
export interface NetnsHost {
  /** The namespace's name (`ip netns list`). */
  name: string;
  /** Its address on the bridge: what the hub sees as the agent's source address. */
  address: string;
  /** The command prefix that runs a program inside it (startApp's `prefix`). */
  exec: string[];
}

export interface NetnsLab {
  bridge: string;
  /** The root namespace's address on the bridge: where a server must listen for the hosts to reach it. */
  hubAddress: string;
  hosts: NetnsHost[];
  /** Kills whatever still runs inside the namespaces, deletes them and the bridge; safe to call twice. */
  destroy(): Promise<void>;
}

/** Every name carries the creating process's pid, so a later run can tell leftovers of a dead run from a live one. */
const NS_PREFIX = "volley-e2e-";
const BRIDGE_PREFIX = "vlb"; // interface names have at most 15 characters: vlb<pid>, vlh<pid>-<i>
const VETH_PREFIX = "vlh";
const SUBNET_PREFIX = "10.231";

/** Set to `off` to take the path of a machine without namespaces (the test then skips). */
const FORCE_OFF = process.env.VOLLEY_E2E_NETNS === "off";

async function ip(...args: string[]): Promise<string> {
  try {
    return (await run("ip", args, { timeout: 10_000 })).stdout;
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    const why = e.code === "ENOENT" ? "the ip command (iproute2) is not installed" : e.stderr?.trim() || e.message;
    throw new Error(`ip ${args.join(" ")}: ${why}`);
  }
}

/** Runs `ip …` for cleanup: a thing already gone is the outcome wanted, not an error. */
const ipQuiet = (...args: string[]) => ip(...args).catch(() => "");

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** SIGKILLs every process inside a namespace (leftovers only: a test stops its own processes gracefully first). */
async function killInside(ns: string): Promise<void> {
  const pids = (await ipQuiet("netns", "pids", ns)).split(/\s+/).filter(Boolean).map(Number);
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      /* already gone */
    }
  }
}

async function deleteNamespace(ns: string): Promise<void> {
  await killInside(ns);
  await ipQuiet("netns", "delete", ns);
}

async function namespaces(): Promise<string[]> {
  return (await ipQuiet("netns", "list"))
    .split("\n")
    .map((l) => l.split(" ")[0]!)
    .filter(Boolean);
}

async function links(): Promise<string[]> {
  // "3: vlh123-0@if2: <…>": the name, without the peer suffix.
  return (await ipQuiet("-o", "link", "show"))
    .split("\n")
    .map((l) => l.split(": ")[1]?.split("@")[0] ?? "")
    .filter(Boolean);
}

/** Removes the namespaces, bridges and veths of runs whose process is gone (killed before its afterAll). */
async function sweepLeftovers(): Promise<void> {
  const ownerOf = (name: string, re: RegExp) => Number(re.exec(name)?.[1] ?? NaN);
  for (const ns of await namespaces()) {
    const pid = ownerOf(ns, new RegExp(`^${NS_PREFIX}(\\d+)-`));
    if (Number.isInteger(pid) && !alive(pid)) await deleteNamespace(ns);
  }
  for (const link of await links()) {
    const pid = ownerOf(link, new RegExp(`^(?:${BRIDGE_PREFIX}|${VETH_PREFIX})(\\d+)(?:-\\d+)?$`));
    if (Number.isInteger(pid) && !alive(pid)) await ipQuiet("link", "delete", link);
  }
}

/**
 * Why this machine cannot run namespace tests, or null if it can: tries the real thing (a namespace
 * with a veth into it) rather than guessing from uid or capabilities, and undoes it.
 */
export async function netnsUnavailable(): Promise<string | null> {
  if (FORCE_OFF) return "VOLLEY_E2E_NETNS=off asks to skip it";
  if (process.platform !== "linux") return `network namespaces are Linux-only (this is ${process.platform})`;
  const ns = `${NS_PREFIX}${process.pid}-probe`;
  const veth = `${VETH_PREFIX}${process.pid}-9`;
  try {
    await deleteNamespace(ns);
    await ip("netns", "add", ns);
    await ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns);
    return null;
  } catch (err) {
    return `cannot create network namespaces here (${(err as Error).message}); this test needs root with CAP_SYS_ADMIN and CAP_NET_ADMIN and iproute2`;
  } finally {
    await ipQuiet("link", "delete", veth);
    await deleteNamespace(ns);
  }
}

/** A /24 under 10.231 that no interface of this machine uses yet (a concurrent run picks another). */
async function freeSubnet(): Promise<string> {
  const used = await ipQuiet("-o", "-4", "addr", "show");
  for (let i = 0; i < 254; i++) {
    const k = 1 + ((process.pid + i) % 254);
    if (!used.includes(` ${SUBNET_PREFIX}.${k}.`)) return `${SUBNET_PREFIX}.${k}`;
  }
  throw new Error(`every ${SUBNET_PREFIX}.x.0/24 is in use: delete leftover bridges (ip -o -4 addr show | grep ${SUBNET_PREFIX})`);
}

/**
 * `count` hosts: namespaces with `lo` up and one veth each into a bridge in the root namespace, on a
 * private /24 (bridge .1, hosts .2, .3, …). Names are unique per process; a leftover of an earlier
 * run with the same pid is replaced, and leftovers of dead runs are swept first.
 */
export async function createNetnsLab(count: number): Promise<NetnsLab> {
  await sweepLeftovers();
  const bridge = `${BRIDGE_PREFIX}${process.pid}`;
  const names = Array.from({ length: count }, (_, i) => `${NS_PREFIX}${process.pid}-${i}`);
  const veths = names.map((_, i) => `${VETH_PREFIX}${process.pid}-${i}`);
  let destroyed = false;
  const destroy = async () => {
    if (destroyed) return;
    destroyed = true;
    for (const ns of names) await deleteNamespace(ns);
    for (const veth of veths) await ipQuiet("link", "delete", veth);
    await ipQuiet("link", "delete", bridge);
  };
  await ipQuiet("link", "delete", bridge);
  for (const ns of names) await deleteNamespace(ns);
  try {
    const net = await freeSubnet();
    await ip("link", "add", bridge, "type", "bridge");
    await ip("addr", "add", `${net}.1/24`, "dev", bridge);
    await ip("link", "set", bridge, "up");
    const hosts: NetnsHost[] = [];
    for (const [i, ns] of names.entries()) {
      const address = `${net}.${i + 2}`;
      await ip("netns", "add", ns);
      await ip("-n", ns, "link", "set", "lo", "up");
      await ip("link", "add", veths[i]!, "type", "veth", "peer", "name", "eth0", "netns", ns);
      await ip("link", "set", veths[i]!, "master", bridge, "up");
      await ip("-n", ns, "addr", "add", `${address}/24`, "dev", "eth0");
      await ip("-n", ns, "link", "set", "eth0", "up");
      hosts.push({ name: ns, address, exec: ["ip", "netns", "exec", ns] });
    }
    return { bridge, hubAddress: `${net}.1`, hosts, destroy };
  } catch (err) {
    await destroy();
    throw err;
  }
}
