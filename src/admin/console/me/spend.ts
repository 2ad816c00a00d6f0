// GET /spend?days=30: what the customer spent per day over the last N days (days in
// usage.timezone, today included, every day listed, oldest first) and per model over the
// same range: the usage log's own spend report for their user (or token), so each figure
// equals what `/admin/v1/usage` and `gateway usage` give for that subject and range.

import { Calendar, type Period } from "../../../billing/calendar.js";
import { formatNano } from "../../../billing/cost.js";
import { dayNamer } from "../../../state/spend-keys.js";
import { intParam, knownParams, subjectOf } from "./input.js";
import { meRoute } from "./route.js";

/** The longest range a customer may ask for: the chart's, and well within retention's rollups. */
export const MAX_SPEND_DAYS = 90;

export const spendRoute = meRoute("GET", "/spend", async ({ customer, query, now }, deps) => {
  knownParams(query, ["days"]);
  const count = intParam(query, "days", { min: 1, max: MAX_SPEND_DAYS, fallback: 30 });
  const timeZone = deps.live().timeZone;
  const days = lastDays(timeZone, now, count);
  const range = { since: days[0].start, until: days.at(-1)!.end, timeZone, subject: subjectOf(customer) };
  const [byDay, byModel] = await Promise.all([deps.usageLog.spend("day", range), deps.usageLog.spend("model", range)]);
  const name = dayNamer(timeZone);
  const spent = new Map(byDay.map((r) => [r.key, r] as const));
  let totalNano = 0n;
  let totalRequests = 0;
  for (const r of byDay) {
    totalNano += r.costNano;
    totalRequests += r.requests;
  }
  return {
    status: 200,
    body: {
      timezone: timeZone,
      // gateway.yaml names no currency: every amount is an exact decimal of the one the
      // operator bills in.
      currency: null,
      since: range.since, until: range.until,
      days: days.map((d) => {
        const date = name(d.start);
        const row = spent.get(date);
        return { date, cost: formatNano(row?.costNano ?? 0n), requests: row?.requests ?? 0 };
      }),
      models: byModel.map((r) => ({ model: r.key, cost: formatNano(r.costNano), requests: r.requests })),
      total: { cost: formatNano(totalNano), requests: totalRequests },
    },
  };
});

/** The last `count` days in the zone, today the last, oldest first (a day of a clock change
 * is 23 or 25 hours long). */
function lastDays(timeZone: string, now: number, count: number): Period[] {
  const calendar = new Calendar();
  const days = [calendar.period("day", timeZone, now)];
  while (days.length < count) days.unshift(calendar.period("day", timeZone, days[0].start - 1));
  return days;
}
