// The 402 every Accounts implementation gives when a reservation does not fit, in one
// wording whichever store holds the money.

import { formatNano } from "../billing/cost.js";
import { errors } from "../errors/catalogue.js";
import { GatewayError } from "../errors/gateway-error.js";

/** Pre-deduction failed: what remains of the token quota or balance, and what was required. */
export function preDeductionFailed(what: string, left: bigint, required: bigint): GatewayError {
  const remaining = left > 0n ? left : 0n;
  const error = new GatewayError(errors.preDeductionFailed,
    `Pre-deduction failed: the remaining ${what} is ${formatNano(remaining)}, but this request requires a pre-deduction of ${formatNano(required)} (estimated from its size and max tokens). Lower max_tokens or top up.`);
  return Object.assign(error, { [REMAINING]: remaining });
}

const REMAINING = Symbol("remaining nano-units");

/** What was left when a pre-deduction did not fit (from preDeductionFailed); undefined for
 * any other error. */
export function remainingOf(err: unknown): bigint | undefined {
  return err instanceof GatewayError ? (err as unknown as { [REMAINING]?: bigint })[REMAINING] : undefined;
}
