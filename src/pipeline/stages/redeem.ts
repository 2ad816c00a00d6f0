// POST /v1/dashboard/redeem {"code": "gw-…"}: a token holder redeems a code into their own
// user's balance (a stored user's, or a gateway.yaml user's: the credit goes to the ledger
// either way). The store makes it atomic across every instance: one code, one credit.
// Nothing is charged and no upstream is reached.
//
// Codes carry 160 random bits, so guessing one is hopeless; still, each token may fail at
// most GUESSES.max times per GUESSES.perMs (a limiter window of its own, shared by every
// instance on a shared limiter), on top of the token's request_rate windows, which give a
// failed request's hit back.

import { formatNano } from "../../billing/cost.js";
import type { AccountService } from "../../accounts/service.js";
import type { RedeemResult } from "../../accounts/store.js";
import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { log } from "../../observability/log.js";
import type { RateWindow } from "../../runtime/types.js";
import type { Hit, Limiter } from "../../state/interfaces.js";
import type { Needs, Stage } from "../context.js";
import { describeWindow } from "../rate-windows.js";
import { stateFailure } from "../state-failure.js";

/** Failed redemptions a token may make in a sliding window. */
export const GUESSES: RateWindow = Object.freeze({ max: 10, perMs: 10 * 60_000 });

/** Longer than any code the gateway makes: anything past it is no code (not worth a lookup). */
const MAX_CODE_LENGTH = 200;

/** Why a code was refused, as the holder is told (400: the SDKs do not retry it). */
const refusals: Readonly<Record<Extract<RedeemResult, { ok: false }>["reason"], string>> = {
  unknown: "No such redemption code: check that it was copied whole.",
  redeemed: "This redemption code has been redeemed already.",
  expired: "This redemption code has expired.",
};

type In = Needs<"caller" | "account" | "input">;

/** The redeem terminal. */
export function redeemStage(service: AccountService, limiter: Limiter): Stage<In> {
  return async (ctx) => {
    const code = codeOf(ctx.input.json);
    const key = `redeem\0${ctx.caller.name}`;
    const hit = await takeGuess(limiter, key);
    let result: RedeemResult;
    try {
      result = await service.redeem(code, ctx.caller.user, ctx.caller.name);
    } catch (err) {
      await giveBack(limiter, key, hit, ctx.id); // the store failed, not the holder
      throw stateFailure(err, "accounts");
    }
    if (!result.ok) throw new GatewayError(errors.invalidParameter, refusals[result.reason]);
    await giveBack(limiter, key, hit, ctx.id);
    // The new balance: a failure to read it does not undo the credit, so it is then left out.
    const balance = await service.user(ctx.caller.user).then((u) => u.balance, (err: unknown) => {
      log.warn("redeem: balance not read after the credit", { requestId: ctx.id, error: String(err) });
      return undefined;
    });
    const text = JSON.stringify({
      object: "redemption", redeemed: formatNano(result.entry.amountNano), ...(balance === undefined ? {} : { balance }),
    });
    ctx.res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
    ctx.res.end(text);
  };
}

function codeOf(body: Record<string, unknown>): string {
  const code = body.code;
  if (code === undefined || code === null) throw new GatewayError(errors.missingParameter, "Missing required parameter: 'code' (the redemption code).");
  if (typeof code !== "string" || code.trim() === "" || code.length > MAX_CODE_LENGTH) {
    throw new GatewayError(errors.invalidParameter, "'code' must be a redemption code: a non-empty string.");
  }
  return code;
}

/** One hit in the token's guess window: a 429 when it is full, a 503 when the limiter is
 * unreachable. A success gives it back, so only failures stay counted. */
async function takeGuess(limiter: Limiter, key: string): Promise<Hit> {
  let taken: Awaited<ReturnType<Limiter["take"]>>;
  try {
    taken = await limiter.take(key, GUESSES, Date.now());
  } catch (err) {
    throw stateFailure(err, "rate limits");
  }
  if (!taken.ok) {
    const seconds = Math.ceil(taken.retryAfterMs / 1000);
    throw new GatewayError(errors.rateLimited,
      `Too many failed redemptions: at most ${GUESSES.max} per ${describeWindow(GUESSES)} for a token. Retry after ${seconds} seconds.`,
      { headers: { "retry-after": String(seconds) } });
  }
  return taken.hit;
}

async function giveBack(limiter: Limiter, key: string, hit: Hit, requestId: string): Promise<void> {
  try {
    await limiter.refund(key, hit);
  } catch (err) {
    log.warn("redeem: guess window hit not given back", { requestId, error: String(err) }); // it lapses with its window
  }
}
