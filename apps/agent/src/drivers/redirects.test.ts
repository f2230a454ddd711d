import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { socketioOptionsSchema } from "@volley/contracts";
import { HTTP_PATHS, startHttpTargetServer, startSocketioEchoServer, startSocketioV2EchoServer } from "@volley/targets";
import type { Driver } from "./driver";
import { connectError, driverTestKit } from "./driver-test-kit";
import { longPollingDriver, shortPollingDriver } from "./polling-driver";
import { socketioDriver } from "./socketio-driver";
import { sseDriver } from "./sse-driver";

const kit = driverTestKit();

/** A server on `host` that answers every request with `status`, Location pointing at `to` + the request's path. */
async function redirector(host: string, to: (path: string) => string, status = 302): Promise<{ url: string; hits: string[]; close(): Promise<void> }> {
  const hits: string[] = [];
  const server: Server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    req.resume();
    res.writeHead(status, { location: to(req.url ?? "/") }).end();
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  return {
    url: `http://${host}:${(server.address() as AddressInfo).port}`,
    hits,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/**
 * A load test hits the URL it was given: a redirect is a handshake error naming the Location,
 * never followed — followed, it would carry the load and the plan's headers to an address the
 * target policy never checked (another host, a private network).
 */
describe("drivers refuse redirects", () => {
  const HTTP_CASES: [string, Driver, string][] = [
    ["sse", sseDriver, HTTP_PATHS.sse],
    ["long polling", longPollingDriver, "/poll"],
    ["short polling", shortPollingDriver, "/poll"],
  ];
  for (const [name, driver, path] of HTTP_CASES) {
    it(`${name}: a 302 to another address (where a real target answers) is a handshake error with the Location; nothing reaches it`, async () => {
      const target = await kit.serve(startHttpTargetServer());
      // The real target is reachable and would answer; it must not see a single request.
      const elsewhere = await kit.serve(redirector("127.0.0.2", (p) => `${target.url}${p}`, 307));
      const front = await kit.serve(redirector("127.0.0.1", (p) => `${elsewhere.url}${p}`));
      const err = await connectError(driver, { url: `${front.url}${path}`, headers: { authorization: "Bearer plan-secret" } });
      expect(err.errorClass).toBe("handshake");
      expect(err.detail).toContain(`HTTP 302 redirect to ${elsewhere.url}${path}`);
      expect(err.detail).toMatch(/not followed/);
      expect(front.hits.length).toBe(1);
      expect(elsewhere.hits).toEqual([]);
    });
  }

  for (const [name, socketio, start] of [
    ["socket.io v4, polling", socketioOptionsSchema.parse({ transports: ["polling"] }), startSocketioEchoServer],
    ["socket.io v4, websocket", socketioOptionsSchema.parse({ transports: ["websocket"] }), startSocketioEchoServer],
    ["socket.io v2, polling", socketioOptionsSchema.parse({ transports: ["polling"], version: 2 }), startSocketioV2EchoServer],
  ] as const) {
    it(`${name}: a 302 to a working Socket.IO server is a handshake error with the Location, not a connection there`, async () => {
      const echo = await kit.serve(start());
      const front = await kit.serve(redirector("127.0.0.1", (p) => `${echo.url}${p}`));
      const err = await connectError(socketioDriver, { url: front.url, socketio });
      expect(err.errorClass).toBe("handshake");
      expect(err.detail).toContain(`HTTP 302 redirect to ${echo.url}/socket.io/`);
      expect(front.hits.length).toBeGreaterThanOrEqual(1);
    });
  }

  it("socket.io still connects normally through the guarded agent", async () => {
    const echo = await kit.serve(startSocketioEchoServer());
    const conn = await kit.connect(socketioDriver, { url: echo.url, socketio: socketioOptionsSchema.parse({ transports: ["polling"] }) });
    conn.close();
  });
});
