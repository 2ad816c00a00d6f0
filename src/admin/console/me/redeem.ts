// POST /redeem {code}: the customer redeems a code into their user's balance, through the
// same redemption as POST /v1/dashboard/redeem (pipeline/redemption.ts): the same answer,
// the same audit record (actor token:<name>) and the same window on failed guesses, which
// both doors share per token.

import { errors } from "../../../errors/catalogue.js";
import { GatewayError } from "../../../errors/gateway-error.js";
import { redeemCode } from "../../../pipeline/redemption.js";
import { objectBody } from "./input.js";
import { meRoute } from "./route.js";

export const redeemRoute = meRoute("POST", "/redeem", async ({ customer, body, requestId }, deps) => {
  objectBody(body, ["code"]);
  if (customer.user === undefined) throw new GatewayError(errors.invalidParameter, "This token has no account to credit a code to.");
  const answer = await redeemCode(deps.service, deps.limiter, { token: customer.token, user: customer.user }, body, requestId ?? "-");
  return { status: 200, body: answer };
});
