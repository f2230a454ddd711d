import { createServer, type Server } from "node:http";
import type { LookupAddress } from "node:dns";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ResolveAll } from "@volley/contracts/public-lookup";
import { postWebhook, WebhookDeliveryError } from "./webhook-delivery";

// postWebhook against a real receiver on 127.0.0.1: self-hosted delivers there; hosted mode
// re-checks the address when it sends, so a name re-pointed at loopback after creation is refused.

let server: Server;
let port: number;
const hits: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push(`${req.method} ${req.headers.host}${req.url}`);
    req.resume();
    req.on("end", () => res.writeHead(200).end("ok"));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const post = (url: string, extra: Partial<Parameters<typeof postWebhook>[0]> = {}) =>
  postWebhook({ url, secret: "s", event: "run.finished", deliveryId: "d1", body: "{}", timeoutMs: 2000, ...extra });

/** A name server that answers `answers` in turn (the last one from then on), counting questions. */
function rebinding(...answers: string[][]): ResolveAll & { asked: number } {
  const resolve = ((_host: string, cb: (err: NodeJS.ErrnoException | null, a: LookupAddress[]) => void) => {
    const next = answers[Math.min(resolve.asked++, answers.length - 1)]!;
    setImmediate(() =>
      cb(
        null,
        next.map((address) => ({ address, family: address.includes(":") ? 6 : 4 })),
      ),
    );
  }) as ResolveAll & { asked: number };
  resolve.asked = 0;
  return resolve;
}

describe("postWebhook", () => {
  it("self-hosted: delivers to a receiver on loopback", async () => {
    hits.length = 0;
    expect(await post(`http://127.0.0.1:${port}/hook`)).toEqual({ status: 200, excerpt: "ok" });
    expect(hits).toEqual([`POST 127.0.0.1:${port}/hook`]);
  });

  it("hosted: refuses loopback, private and link-local literals before connecting", async () => {
    hits.length = 0;
    for (const host of ["127.0.0.1", "[::1]", "10.0.0.1", "169.254.169.254", "[::ffff:127.0.0.1]"]) {
      const err = await post(`http://${host}:${port}/hook`, { publicOnly: true }).catch((e: unknown) => e);
      expect(err, host).toBeInstanceOf(WebhookDeliveryError);
      expect((err as Error).message, host).toMatch(/refused: .*hosted Volley only reaches public addresses/);
    }
    expect(hits).toEqual([]);
  });

  it("hosted: a name that resolved to a public address when the webhook was created but to 127.0.0.1 now is refused at send time", async () => {
    hits.length = 0;
    const dns = rebinding(["93.184.216.34"], ["127.0.0.1"]);
    // What web saw when the webhook was created: a public address.
    dns("hooks.example.test", (_e, a) => expect(a[0]!.address).toBe("93.184.216.34"));
    const err = await post(`http://hooks.example.test:${port}/hook`, { publicOnly: true, resolveAll: dns }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WebhookDeliveryError);
    expect((err as Error).message).toMatch(/hooks\.example\.test resolves to 127\.0\.0\.1 \(loopback\)/);
    // One lookup for the send: the address checked is the one the socket would have used.
    expect(dns.asked).toBe(2);
    expect(hits).toEqual([]);
  });

  it("hosted: refuses a name with any non-public address among public ones, and the real localhost", async () => {
    hits.length = 0;
    const mixed = await post(`http://hooks.example.test:${port}/hook`, { publicOnly: true, resolveAll: rebinding(["93.184.216.34", "10.1.1.1"]) }).catch(
      (e: unknown) => e,
    );
    expect((mixed as Error).message).toMatch(/10\.1\.1\.1 \(private\)/);
    const local = await post(`http://localhost:${port}/hook`, { publicOnly: true }).catch((e: unknown) => e);
    expect((local as Error).message).toMatch(/localhost resolves to .*loopback/);
    expect(hits).toEqual([]);
  });
});
