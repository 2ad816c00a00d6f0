// A TCP proxy in front of a real server (PostgreSQL, Redis) that a test can cut (stop: every
// connection closed, new ones refused), restore (start, on the same port) or freeze (bytes
// stop flowing, nothing is closed: a server that hangs).

import net from "node:net";

export interface TcpProxy {
  readonly port: number;
  freeze(): void;
  stop(): Promise<void>;
  start(): Promise<void>;
}

export async function tcpProxy(targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let frozen = false;
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, "127.0.0.1");
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {});
    }
    client.on("data", (d) => void (frozen || upstream.write(d)));
    upstream.on("data", (d) => void (frozen || client.write(d)));
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    freeze: () => void (frozen = true),
    async stop() {
      const closed = new Promise((r) => server.close(r));
      for (const s of sockets) s.destroy();
      await closed;
    },
    async start() {
      frozen = false;
      await new Promise<void>((r) => server.listen(port, "127.0.0.1", r));
    },
  };
}
