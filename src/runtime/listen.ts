// Binding a node:http server to a configured address: the main listener, the ops listener
// (metrics, health) and the admin API's each do it, and say the URL they serve on.

import type http from "node:http";
import type { AddressInfo } from "node:net";

/** Listens on host:port; resolves to the URL it serves on (the port chosen for port 0, an
 * IPv6 host in brackets); rejects when it cannot (taken, not allowed). */
export function listenAt(server: http.Server, host: string, port: number): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve(serverUrl(server));
    });
  });
}

/** The URL a listening server serves on. */
export function serverUrl(server: http.Server): string {
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}
