import net from "node:net";

/** Listens on `host:port` and closes again: the port it got (port 0: any free one). */
function listenOnce(port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(port, host, () => {
      const { port: got } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(got));
    });
  });
}

/**
 * A port free on 127.0.0.1 and on ::1. Clients of `http://localhost:<port>` may try ::1 first,
 * so a port some other server holds on ::1 would answer them in its place (seen as a 404 from a
 * stranger in e2e); a host without IPv6 counts as free there.
 */
export async function freePort(): Promise<number> {
  for (let tries = 0; ; tries++) {
    const port = await listenOnce(0, "127.0.0.1");
    const v6 = await listenOnce(port, "::1").then(
      () => true,
      (err: NodeJS.ErrnoException) => err.code === "EADDRNOTAVAIL" || err.code === "EAFNOSUPPORT",
    );
    if (v6 || tries >= 20) return port;
  }
}
