import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";

/**
 * A TCP relay between the hub and the real PostgreSQL that a test can cut (every connection
 * dropped, new ones refused) and restore: the database going away as a crash, a failover or a
 * network blink looks to the hub, without stopping the server other test files share.
 */
export class DatabaseRelay {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private cut = false;
  private constructor(upstream: { host: string; port: number }) {
    this.server = createServer((client) => {
      if (this.cut) return void client.destroy();
      const server = connect(upstream.port, upstream.host);
      for (const s of [client, server]) {
        this.sockets.add(s);
        s.on("close", () => this.sockets.delete(s));
        s.on("error", () => {});
      }
      client.pipe(server).pipe(client);
    });
  }

  /** A relay in front of `databaseUrl`'s server, listening; `url` is the same database through it. */
  static async start(databaseUrl: string): Promise<{ relay: DatabaseRelay; url: string }> {
    const direct = new URL(databaseUrl);
    const relay = new DatabaseRelay({ host: direct.hostname, port: Number(direct.port || 5432) });
    await new Promise<void>((resolve) => relay.server.listen(0, "127.0.0.1", resolve));
    const relayed = new URL(databaseUrl);
    relayed.hostname = "127.0.0.1";
    relayed.port = String((relay.server.address() as AddressInfo).port);
    return { relay, url: relayed.toString() };
  }

  drop(): void {
    this.cut = true;
    for (const s of this.sockets) s.destroy();
  }
  restore(): void {
    this.cut = false;
  }
  close(): Promise<void> {
    this.drop();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
