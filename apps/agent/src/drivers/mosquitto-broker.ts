import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect as tcpConnect } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { createWebSocketStream, WebSocketServer } from "ws";
import { freePort } from "./driver-test-kit";

const MOSQUITTO = ["/usr/sbin/mosquitto", "/usr/bin/mosquitto", "/usr/local/sbin/mosquitto"].find(existsSync);
const PASSWD = ["/usr/bin/mosquitto_passwd", "/usr/local/bin/mosquitto_passwd"].find(existsSync);

/** Test-only: whether a real mosquitto can be started here (CI installs it); tests skip, saying so, when not. */
export const mosquittoInstalled = MOSQUITTO !== undefined && PASSWD !== undefined;
if (!mosquittoInstalled) console.warn("mqtt tests: skipped — mosquitto (with mosquitto_passwd) not installed (apt-get install mosquitto)");

export interface MosquittoBroker {
  /** WebSocket listener that takes anonymous clients. */
  url: string;
  /** WebSocket listener that refuses anonymous clients and knows only `user`/`password`. */
  authUrl: string;
  user: string;
  password: string;
  close(): Promise<void>;
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = tcpConnect({ host: "127.0.0.1", port });
    s.once("connect", () => (s.destroy(), resolve(true)));
    s.once("error", () => resolve(false));
  });
}

/**
 * Mosquitto's own WebSocket side, or, where its package cannot open one (Debian 12's 2.0.11 links
 * libwebsockets without external poll and exits "Unable to start any listening sockets"), a
 * `ws` server that carries each WebSocket's binary frames to mosquitto's MQTT port and back, byte
 * for byte: MQTT over WebSocket is exactly that, so the broker behind it is still the real one.
 */
interface Bridge {
  url: string;
  close(): Promise<void>;
}

async function bridgeTo(mqttPort: number): Promise<Bridge> {
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0, handleProtocols: (p) => (p.has("mqtt") ? "mqtt" : false) });
  await new Promise((r) => wss.once("listening", r));
  wss.on("connection", (ws) => {
    const tcp = tcpConnect({ host: "127.0.0.1", port: mqttPort });
    const stream = createWebSocketStream(ws);
    // The broker's end (after its last packet, a DISCONNECT with a reason) ends the WebSocket through the pipe, in order.
    stream.pipe(tcp).pipe(stream);
    const end = () => (tcp.destroy(), ws.terminate());
    stream.once("error", end);
    tcp.once("error", end);
  });
  const { port } = wss.address() as { port: number };
  return {
    url: `ws://127.0.0.1:${port}/mqtt`,
    close: () => {
      for (const c of wss.clients) c.terminate();
      return new Promise((r) => wss.close(() => r()));
    },
  };
}

async function spawnMosquitto(dir: string, lines: string[], ports: number[]): Promise<{ stop(): Promise<void> } | string> {
  await writeFile(join(dir, "mosquitto.conf"), `${lines.join("\n")}\n`);
  const child: ChildProcess = spawn(MOSQUITTO!, ["-c", join(dir, "mosquitto.conf")], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  for (let i = 0; !(await Promise.all(ports.map(listening))).every(Boolean); i++) {
    if (child.exitCode !== null) return stderr;
    if (i > 100) throw new Error(`mosquitto did not start: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  // A mosquitto without WebSocket support binds the port before it gives up ("Unable to start any
  // listening sockets"): one that is still running a moment after its ports answer is up.
  await new Promise((r) => setTimeout(r, 200));
  if (child.exitCode !== null) return stderr;
  return {
    async stop() {
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        await exited;
      }
    },
  };
}

/**
 * Test-only: a real mosquitto with two MQTT-over-WebSocket listeners on free loopback ports, its
 * own config in a temp dir (plus `settings`, global config lines), $SYS published every second
 * (for counts checked against the broker's own), stopped and removed by close(). `acl`: the
 * password listener's ACL file (mosquitto's syntax: `user volley` then `topic read devices/#`).
 */
export async function startMosquitto(settings: string[] = [], opts: { acl?: string } = {}): Promise<MosquittoBroker> {
  const dir = await mkdtemp(join(tmpdir(), "volley-mosquitto-"));
  const [port, authPort] = [await freePort(), await freePort()];
  const user = "volley";
  const password = "s3cret-pass";
  execFileSync(PASSWD!, ["-b", "-c", join(dir, "passwd"), user, password]);
  const config = (protocol: string[]) => [
    // Running as root, mosquitto drops to `user`: keep the current user so it can read its files.
    `user ${userInfo().username}`,
    "per_listener_settings true",
    "persistence false",
    "sys_interval 1",
    "log_dest stderr",
    "log_type error",
    ...settings,
    `listener ${port} 127.0.0.1`,
    ...protocol,
    "allow_anonymous true",
    `listener ${authPort} 127.0.0.1`,
    ...protocol,
    "allow_anonymous false",
    `password_file ${join(dir, "passwd")}`,
    ...(opts.acl === undefined ? [] : [`acl_file ${join(dir, "acl")}`]),
  ];
  if (opts.acl !== undefined) await writeFile(join(dir, "acl"), `${opts.acl}\n`);
  let broker = await spawnMosquitto(dir, config(["protocol websockets"]), [port, authPort]);
  const bridges: Bridge[] = [];
  if (typeof broker === "string") {
    if (!broker.includes("Unable to start any listening sockets")) throw new Error(`mosquitto did not start: ${broker}`);
    broker = await spawnMosquitto(dir, config([]), [port, authPort]);
    if (typeof broker === "string") throw new Error(`mosquitto did not start: ${broker}`);
    bridges.push(await bridgeTo(port), await bridgeTo(authPort));
  }
  const { stop } = broker;
  return {
    url: bridges[0]?.url ?? `ws://127.0.0.1:${port}/mqtt`,
    authUrl: bridges[1]?.url ?? `ws://127.0.0.1:${authPort}/mqtt`,
    user,
    password,
    async close() {
      await stop();
      for (const b of bridges) await b.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
