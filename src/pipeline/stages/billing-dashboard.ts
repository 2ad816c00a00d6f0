// The OpenAI-compatible billing endpoints chat front-ends read to show a balance:
// /v1/dashboard/billing/subscription (the limit, and what is left) and
// /v1/dashboard/billing/usage (spent, in cents). A token with a quota reports its own quota
// as the limit; otherwise its user's credit (gateway.yaml's credit plus the ledger's
// grants, top-ups, adjustments and redeemed codes). `balance` is always the user's money
// left: credit − settled spend − what requests in flight hold.
// `total_usage` is the settled spend: Σ costNano of the usage log's entries, refunds left
// out (what `gateway usage --by token|user` sums); it lists no per-request or per-day
// costs, and reads no date range.
//
// The amounts stay JSON numbers (clients parse them as such), written as the exact decimal
// of the nano-units, never through a float: 9899999 nano is 0.009899999, not
// 0.009899999999999999.

import { formatNano, formatScaled } from "../../billing/cost.js";
import type { Accounts } from "../../state/interfaces.js";
import type { Needs, Stage } from "../context.js";

/** Nano-units in cents: 10^-7 of the currency. */
const CENT_DECIMALS = 7;

/** A JSON number's text, spliced into the body as written. */
class ExactNumber {
  constructor(readonly text: string) {}
}

/** A flat JSON object whose ExactNumber fields are written from their text. */
function exactJson(fields: Readonly<Record<string, unknown>>): string {
  const parts = Object.entries(fields).map(([key, value]) =>
    `${JSON.stringify(key)}:${value instanceof ExactNumber ? value.text : JSON.stringify(value)}`);
  return `{${parts.join(",")}}`;
}

/** The billing terminal: the balance a chat front-end shows. */
export function billingDashboardStage(accounts: Accounts): Stage<Needs<"caller" | "account">> {
  return async (ctx) => {
    const token = ctx.caller;
    const user = ctx.account.user;
    let body: Readonly<Record<string, unknown>>;
    if (ctx.path.endsWith("/subscription")) {
      const limit = new ExactNumber(formatNano(token.quotaNano ?? user.creditNano));
      const [spent, reserved] = await Promise.all([accounts.spentByUser(user.name), accounts.reservedByUser(user.name)]);
      body = {
        object: "billing_subscription",
        has_payment_method: true,
        soft_limit_usd: limit,
        hard_limit_usd: limit,
        system_hard_limit_usd: limit,
        access_until: token.expiresAt !== undefined ? Math.floor(token.expiresAt / 1000) : 0,
        balance: new ExactNumber(formatNano(user.creditNano - spent - reserved)),
      };
    } else {
      const spent = await (token.quotaNano !== undefined ? accounts.spentByToken(token.name) : accounts.spentByUser(user.name));
      body = { object: "list", total_usage: new ExactNumber(formatScaled(spent, CENT_DECIMALS)) };
    }
    const text = exactJson(body);
    ctx.res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
    ctx.res.end(text);
  };
}
