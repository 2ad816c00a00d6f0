// The live traffic route: requests, errors and the money charged per minute over the last
// minutes, cluster-wide (every gateway sharing the usage log), every minute present (0 when
// quiet) so a chart needs no gaps filled.

import { formatNano } from "../billing/cost.js";
import type { TrafficBucket } from "../state/traffic.js";
import type { AdminRoute } from "./route.js";

const MINUTE_MS = 60_000;

export const trafficRoutes: readonly AdminRoute[] = [
  {
    method: "GET", path: "/admin/v1/traffic", operationId: "liveTraffic", scope: "read",
    summary: "Requests, errors (status 400 or more, or a gateway error) and cost (charged, not refunded) per minute over the last `minutes`, oldest first, the current minute last; from the usage log, cluster-wide.",
    query: {
      minutes: { schema: { type: "integer", minimum: 1, maximum: 1440 }, description: "How many minutes back, 1 to 1440 (default 60), the current one included." },
    },
    responses: { 200: "Traffic" },
    async handle({ query, deps }) {
      const minutes = (query.minutes as number | undefined) ?? 60;
      const current = Math.floor(deps.now() / MINUTE_MS);
      const first = current - minutes + 1;
      const rows = await deps.usageLog.traffic({ sinceMs: first * MINUTE_MS, untilMs: (current + 1) * MINUTE_MS }, MINUTE_MS);
      const byMinute = new Map<number, TrafficBucket>(rows.map((r) => [r.bucket, r]));
      const data = [];
      let requests = 0;
      let errors = 0;
      let cost = 0n;
      for (let m = first; m <= current; m++) {
        const r = byMinute.get(m);
        requests += r?.requests ?? 0;
        errors += r?.errors ?? 0;
        cost += r?.costNano ?? 0n;
        data.push({ minute: new Date(m * MINUTE_MS).toISOString(), requests: r?.requests ?? 0, errors: r?.errors ?? 0, cost: formatNano(r?.costNano ?? 0n) });
      }
      return { status: 200, body: { minutes, total: { requests, errors, cost: formatNano(cost) }, data } };
    },
  },
];
