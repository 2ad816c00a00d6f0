// The ledger: reserves a request's worst-case cost against its token's quota and its
// user's balance before the upstream call, then settles to the real cost or releases.
// Check-and-reserve runs in one synchronous step, so concurrent requests cannot overspend.

import { errors } from "../errors/catalogue.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { Store, UsageEntry } from "../state/store.js";
import type { Token, User } from "../runtime/types.js";
import { formatNano } from "./cost.js";

/** A pre-deduction in flight; settle or release it exactly once. */
export interface Reservation {
  readonly token: string;
  readonly user: string;
  readonly amountNano: bigint;
  done: boolean;
}

export class Ledger {
  readonly #store: Store;
  // Settled spend, read once from the store then kept current by settle().
  readonly #spentToken = new Map<string, bigint>();
  readonly #spentUser = new Map<string, bigint>();
  // Reserved (in flight). Held in memory: a crash ends every request in flight, so what a
  // crash leaves behind is released by construction and never charged.
  readonly #reservedToken = new Map<string, bigint>();
  readonly #reservedUser = new Map<string, bigint>();

  constructor(store: Store) {
    this.#store = store;
  }

  /** Settled spend of a token and a user. */
  spentByToken(token: string): bigint {
    return cached(this.#spentToken, token, () => this.#store.spentByToken(token));
  }

  spentByUser(user: string): bigint {
    return cached(this.#spentUser, user, () => this.#store.spentByUser(user));
  }

  /** Throws 401 when a token's quota is used up, 402 when its user's balance is. */
  checkNotExhausted(token: Token, user: User): void {
    if (token.quotaNano !== undefined && this.spentByToken(token.name) >= token.quotaNano) {
      throw new GatewayError(errors.tokenQuotaExhausted);
    }
    if (this.spentByUser(user.name) >= user.creditNano) throw new GatewayError(errors.insufficientQuota);
  }

  /** Reserves `amountNano` or throws 402 stating what remains and what was required. */
  reserve(token: Token, user: User, amountNano: bigint): Reservation {
    this.checkNotExhausted(token, user);
    if (token.quotaNano !== undefined) {
      const left = token.quotaNano - this.spentByToken(token.name) - (this.#reservedToken.get(token.name) ?? 0n);
      if (left < amountNano) throw preDeductionFailed("token quota", left, amountNano);
    }
    const left = user.creditNano - this.spentByUser(user.name) - (this.#reservedUser.get(user.name) ?? 0n);
    if (left < amountNano) throw preDeductionFailed("balance", left, amountNano);
    add(this.#reservedToken, token.name, amountNano);
    add(this.#reservedUser, user.name, amountNano);
    return { token: token.name, user: user.name, amountNano, done: false };
  }

  /** Records the request with its real cost and frees the reservation. */
  settle(reservation: Reservation | undefined, entry: UsageEntry): void {
    if (reservation) this.release(reservation);
    if (entry.costNano > 0n) {
      // Load before recording, so the cached total is not counted from a store that
      // already holds this entry.
      const token = this.spentByToken(entry.token);
      const user = this.spentByUser(entry.user);
      this.#store.record(entry);
      this.#spentToken.set(entry.token, token + entry.costNano);
      this.#spentUser.set(entry.user, user + entry.costNano);
    } else {
      this.#store.record(entry);
    }
  }

  /** Frees a reservation without charging. Safe to call twice. */
  release(reservation: Reservation): void {
    if (reservation.done) return;
    reservation.done = true;
    add(this.#reservedToken, reservation.token, -reservation.amountNano);
    add(this.#reservedUser, reservation.user, -reservation.amountNano);
  }

  /** Amount currently reserved for a user (in flight). */
  reservedByUser(user: string): bigint {
    return this.#reservedUser.get(user) ?? 0n;
  }
}

function cached(map: Map<string, bigint>, key: string, load: () => bigint): bigint {
  let v = map.get(key);
  if (v === undefined) {
    v = load();
    map.set(key, v);
  }
  return v;
}

function add(map: Map<string, bigint>, key: string, delta: bigint): void {
  const next = (map.get(key) ?? 0n) + delta;
  if (next === 0n) map.delete(key);
  else map.set(key, next);
}

function preDeductionFailed(what: string, left: bigint, required: bigint): GatewayError {
  const remaining = left > 0n ? left : 0n;
  return new GatewayError(errors.preDeductionFailed,
    `Pre-deduction failed: the remaining ${what} is ${formatNano(remaining)}, but this request requires a pre-deduction of ${formatNano(required)} (estimated from its size and max tokens). Lower max_tokens or top up.`);
}
