// GET /requests?limit=50&before=<cursor>&id=<request id>: the customer's own requests,
// newest first, a page at a time (the cursor names where the last page ended), or one
// request by its id. Scoped to their user (or token) in the usage-log query itself: another
// tenant's id answers 404 as an unknown one does. What a request cost the operator, its
// channel and its key are the operator's, never shown here.

import { InvalidField } from "../../../accounts/money-input.js";
import { decodeBreakdown, perLabel, subtotalText, totalOf, unitPriceText } from "../../../billing/breakdown.js";
import { formatNano, formatScaled } from "../../../billing/cost.js";
import { errors } from "../../../errors/catalogue.js";
import { GatewayError } from "../../../errors/gateway-error.js";
import type { LogFilter, UsageEntry } from "../../../state/store.js";
import { intParam, knownParams, subjectOf } from "./input.js";
import { meRoute } from "./route.js";

/** Most rows one page holds. */
export const MAX_REQUESTS_PAGE = 200;

/** A request id as the gateway makes them (UUID-shaped); anything else is no id. */
const REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
/** A cursor: the time (epoch ms) of the last row shown, and how many rows of that very
 * millisecond were shown (they are skipped; rows of one ms keep their order). At most 999
 * of one millisecond: a customer's requests never come that thick. */
const CURSOR = /^(\d{1,15})-(\d{1,3})$/;

const PPM_DECIMALS = 6;

export const requestsRoute = meRoute("GET", "/requests", async ({ customer, query }, deps) => {
  knownParams(query, ["limit", "before", "id"]);
  const subject = subjectOf(customer);
  const scope: LogFilter = subject.kind === "user" ? { user: subject.name } : { token: subject.name };
  const id = query.get("id");
  if (id !== null) {
    if (query.has("before") || query.has("limit")) throw new InvalidField("id", "finds one request: give it without before or limit");
    if (!REQUEST_ID.test(id)) throw new InvalidField("id", "must be a request id (the X-Gateway-Request-Id of an answer)");
    const [found] = await deps.usageLog.logs({ ...scope, requestId: id, limit: 1 });
    if (!found) throw new GatewayError(errors.notFound, `No request '${id}' among this account's requests.`);
    return { status: 200, body: { rows: [requestRow(found)] } };
  }
  const limit = intParam(query, "limit", { min: 1, max: MAX_REQUESTS_PAGE, fallback: 50 });
  const cursor = cursorOf(query.get("before"));
  const asked = limit + 1 + (cursor?.skip ?? 0);
  const fetched = await deps.usageLog.logs({ ...scope, ...(cursor ? { until: cursor.time + 1 } : {}), limit: asked });
  let start = 0;
  while (cursor && start < cursor.skip && start < fetched.length && fetched[start].time === cursor.time) start++;
  const rows = fetched.slice(start, start + limit);
  const more = fetched.length > start + limit;
  return { status: 200, body: { rows: rows.map(requestRow), ...(more ? { next: nextCursor(rows, cursor) } : {}) } };
});

function cursorOf(text: string | null): { time: number; skip: number } | undefined {
  if (text === null) return undefined;
  const m = CURSOR.exec(text);
  if (!m) throw new InvalidField("before", "must be the `next` of the previous page");
  return { time: Number(m[1]), skip: Number(m[2]) };
}

/** Where the next page starts: after the last row, counting the rows of its millisecond
 * shown on this page (and on earlier pages, when the whole page was one millisecond). */
function nextCursor(rows: readonly UsageEntry[], cursor: { time: number; skip: number } | undefined): string {
  const last = rows.at(-1)!.time;
  let same = 0;
  for (let i = rows.length - 1; i >= 0 && rows[i].time === last; i--) same++;
  if (same === rows.length && cursor?.time === last) same += cursor.skip;
  return `${last}-${same}`;
}

/** One request as the customer sees it: money as exact decimals, the breakdown read back. */
export function requestRow(e: UsageEntry): Record<string, unknown> {
  const u = e.usage;
  return {
    request_id: e.requestId, time: e.time, model: e.model, protocol: e.inboundProtocol, status: e.status,
    ...(e.error === undefined ? {} : { error: e.error }),
    input_tokens: u.input, output_tokens: u.output,
    ...(u.cacheRead === 0 ? {} : { cache_read_tokens: u.cacheRead }),
    ...(u.cacheWrite === 0 ? {} : { cache_write_tokens: u.cacheWrite }),
    ...(u.reasoning === 0 ? {} : { reasoning_tokens: u.reasoning }),
    cost: formatNano(e.costNano),
    ...(e.breakdown === undefined ? {} : { breakdown: breakdownView(e.breakdown) }),
    ...(e.estimated ? { estimated: true } : {}),
    ...(e.refundedAt === undefined ? {} : { refunded_at: e.refundedAt }),
    duration_ms: e.durationMs,
  };
}

/** A stored breakdown as exact decimals: each priced component's quantity, unit price and
 * subtotal (before the one rounding of the total), and the multipliers; null when the
 * stored text cannot be read (the cost stands as charged). */
function breakdownView(text: string): Record<string, unknown> | null {
  let b;
  try {
    b = decodeBreakdown(text);
  } catch {
    return null;
  }
  return {
    lines: b.lines.map((line) => ({
      component: line.component, quantity: line.quantity, unit_price: unitPriceText(line), per: perLabel(line.per), subtotal: subtotalText(line, b),
    })),
    multiplier: formatScaled(b.multiplierPpm, PPM_DECIMALS),
    ...(b.serviceTier ? { service_tier: { name: b.serviceTier.name, multiplier: formatScaled(b.serviceTier.ppm, PPM_DECIMALS) } } : {}),
    ...(b.tierAbove === undefined ? {} : { tier_above_input_tokens: b.tierAbove }),
    ...(b.variant ? { variant: b.variant } : {}),
    total: formatNano(totalOf(b)),
  };
}
