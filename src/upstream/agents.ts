// Keep-alive connection pools per upstream origin. They outlive config reloads (a reload
// that keeps a channel keeps its warm connections) and are closed at shutdown.

import http from "node:http";
import https from "node:https";

const pools = new Map<string, http.Agent>();

/** The keep-alive agent for a URL's origin, created on first use. */
export function agentFor(url: URL): http.Agent {
  const origin = url.origin;
  let agent = pools.get(origin);
  if (!agent) {
    const options = { keepAlive: true, keepAliveMsecs: 15_000, maxSockets: 512, maxFreeSockets: 64, scheduling: "lifo" as const };
    agent = url.protocol === "https:" ? new https.Agent(options) : new http.Agent(options);
    pools.set(origin, agent);
  }
  return agent;
}

/** Closes every pooled connection (shutdown, and between tests). */
export function destroyAgents(): void {
  for (const agent of pools.values()) agent.destroy();
  pools.clear();
}
