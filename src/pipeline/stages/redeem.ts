// POST /v1/dashboard/redeem {"code": "gw-…"}: a token holder redeems a code into their own
// user's balance (a stored user's, or a gateway.yaml user's: the credit goes to the ledger
// either way). Nothing is charged and no upstream is reached. The redemption itself, and
// its limit on failed guesses, are pipeline/redemption.ts's (the console redeems there too);
// the token's request_rate windows apply on top, and give a failed request's hit back.

import type { AccountService } from "../../accounts/service.js";
import type { Limiter } from "../../state/interfaces.js";
import type { Needs, Stage } from "../context.js";
import { redeemCode } from "../redemption.js";

export { GUESSES } from "../redemption.js";

type In = Needs<"caller" | "account" | "input">;

/** The redeem terminal. */
export function redeemStage(service: AccountService, limiter: Limiter): Stage<In> {
  return async (ctx) => {
    const answer = await redeemCode(service, limiter, { token: ctx.caller.name, user: ctx.caller.user }, ctx.input.json, ctx.id);
    const text = JSON.stringify(answer);
    ctx.res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
    ctx.res.end(text);
  };
}
