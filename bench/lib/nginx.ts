import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Pinned, spawnPinned } from "./spawn-pinned";

export interface Nginx {
  /** `http://127.0.0.1:<port>/hello`: 200 `hello` (5 bytes), keep-alive. */
  url: string;
  /** Its error log, for when a run goes wrong. */
  errors(): string;
  stop(): Promise<void>;
}

/** A port free on 127.0.0.1 right now (the OS's pick), for a server that cannot listen on 0. */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

/**
 * Debian's nginx (`apt-get install -y nginx-light`) with a config of its own, not the packaged
 * service: one worker pinned to `core`, in the foreground, on a free loopback port, with its pid,
 * logs and temp paths in a temp dir, no access log, every request on a kept-alive connection
 * allowed (keepalive_requests), `GET /hello` answering `hello` from the config itself.
 */
export async function startNginx(core = 0): Promise<Nginx> {
  const bin = execFileSync("sh", ["-c", "command -v nginx || ls /usr/sbin/nginx"], { encoding: "utf8" }).trim().split("\n")[0]!;
  const dir = mkdtempSync(path.join(tmpdir(), "volley-nginx-"));
  const port = await freePort();
  const conf = path.join(dir, "nginx.conf");
  writeFileSync(
    conf,
    `worker_processes 1;
daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  keepalive_requests 10000000;
  keepalive_timeout 60s;
  server {
    listen 127.0.0.1:${port} backlog=4096;
    location / { return 200 "hello"; }
  }
}
`,
  );
  const p: Pinned = spawnPinned(core, [bin, "-c", conf, "-p", dir], { limitMs: 3_600_000 });
  const url = `http://127.0.0.1:${port}/hello`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      const r = await fetch(url);
      if ((await r.text()) === "hello") break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`nginx did not answer on ${url}: ${p.stderr().slice(-500)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    errors: () => {
      try {
        return readFileSync(path.join(dir, "error.log"), "utf8");
      } catch {
        return "";
      }
    },
    stop: async () => {
      p.kill();
      await p.exited;
    },
  };
}
