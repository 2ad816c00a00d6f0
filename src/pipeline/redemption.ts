// Redeeming a code into a token holder's own balance, one place for every door it comes
// through: POST /v1/dashboard/redeem (the redeem stage) and the console's customer pages.
// The store makes it atomic across every instance: one code, one credit.
//
// Codes carry 160 random bits, so guessing one is hopeless; still, each token may fail at
// most GUESSES.max times per GUESSES.perMs (a limiter window of its own, shared by every
// instance on a shared limiter and by both doors: the key is the token's).

import { formatNano } from "../billing/cost.js";
import type { AccountService } from "../accounts/service.js";
import type { RedeemResult } from "../accounts/store.js";
import { errors } from "../errors/catalogue.js";
import { GatewayError } from "../errors/gateway-error.js";
import { log } from "../observability/log.js";
import type { RateWindow } from "../runtime/types.js";
import type { Hit, Limiter } from "../state/interfaces.js";
import { describeWindow } from "./rate-windows.js";
import { stateFailure } from "./state-failure.js";

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

/** What a redemption answers: the amount credited and, when it could be read, the user's
 * new balance (exact decimals). */
export interface Redemption {
  readonly object: "redemption";
  readonly redeemed: string;
  readonly balance?: string;
}

/** Who redeems: the token (the audit actor, the guess window's key) and its user (credited). */
export interface CodeHolder {
  readonly token: string;
  readonly user: string;
}

/** Redeems the `code` of a request body for `holder`; throws the GatewayError to answer
 * (400 bad or refused code, 429 too many failures, 503 state unreachable). */
export async function redeemCode(service: AccountService, limiter: Limiter, holder: CodeHolder, body: unknown, requestId: string): Promise<Redemption> {
  const code = codeOf(body);
  const key = `redeem\0${holder.token}`;
  const hit = await takeGuess(limiter, key);
  let result: RedeemResult;
  try {
    result = await service.redeem(code, holder.user, holder.token);
  } catch (err) {
    await giveBack(limiter, key, hit, requestId); // the store failed, not the holder
    throw stateFailure(err, "accounts");
  }
  if (!result.ok) throw new GatewayError(errors.invalidParameter, refusals[result.reason]);
  await giveBack(limiter, key, hit, requestId);
  // The new balance: a failure to read it does not undo the credit, so it is then left out.
  const balance = await service.user(holder.user).then((u) => u.balance, (err: unknown) => {
    log.warn("redeem: balance not read after the credit", { requestId, error: String(err) });
    return undefined;
  });
  return { object: "redemption", redeemed: formatNano(result.entry.amountNano), ...(balance === undefined ? {} : { balance }) };
}

function codeOf(body: unknown): string {
  const code = typeof body === "object" && body !== null ? (body as Record<string, unknown>).code : undefined;
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
