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

/** What the ledger tracks of one token or user. Kept for the process's life (one per name
 * ever used), and only its fields change: a Map whose entries churn with every request
 * would, once old, keep each request's values alive until a full GC (see server.ts). */
interface Account {
  /** Settled spend, read once from the store then kept current by settle(). */
  spent: bigint | undefined;
  /** Reserved by requests in flight. Held in memory: a crash ends every request in
   * flight, so what a crash leaves behind is released by construction and never charged. */
  reserved: bigint;
}

export class Ledger {
  readonly #store: Store;
  readonly #tokens = new Map<string, Account>();
  readonly #users = new Map<string, Account>();

  constructor(store: Store) {
    this.#store = store;
  }

  /** Settled spend of a token and a user. */
  spentByToken(token: string): bigint {
    const account = accountOf(this.#tokens, token);
    return (account.spent ??= this.#store.spentByToken(token));
  }

  spentByUser(user: string): bigint {
    const account = accountOf(this.#users, user);
    return (account.spent ??= this.#store.spentByUser(user));
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
    const tokenAccount = accountOf(this.#tokens, token.name);
    const userAccount = accountOf(this.#users, user.name);
    if (token.quotaNano !== undefined) {
      const left = token.quotaNano - this.spentByToken(token.name) - tokenAccount.reserved;
      if (left < amountNano) throw preDeductionFailed("token quota", left, amountNano);
    }
    const left = user.creditNano - this.spentByUser(user.name) - userAccount.reserved;
    if (left < amountNano) throw preDeductionFailed("balance", left, amountNano);
    tokenAccount.reserved += amountNano;
    userAccount.reserved += amountNano;
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
      accountOf(this.#tokens, entry.token).spent = token + entry.costNano;
      accountOf(this.#users, entry.user).spent = user + entry.costNano;
    } else {
      this.#store.record(entry);
    }
  }

  /** Frees a reservation without charging. Safe to call twice. */
  release(reservation: Reservation): void {
    if (reservation.done) return;
    reservation.done = true;
    accountOf(this.#tokens, reservation.token).reserved -= reservation.amountNano;
    accountOf(this.#users, reservation.user).reserved -= reservation.amountNano;
  }

  /** Amount currently reserved for a user (in flight). */
  reservedByUser(user: string): bigint {
    return this.#users.get(user)?.reserved ?? 0n;
  }
}

function accountOf(accounts: Map<string, Account>, name: string): Account {
  let account = accounts.get(name);
  if (!account) {
    account = { spent: undefined, reserved: 0n };
    accounts.set(name, account);
  }
  return account;
}

function preDeductionFailed(what: string, left: bigint, required: bigint): GatewayError {
  const remaining = left > 0n ? left : 0n;
  return new GatewayError(errors.preDeductionFailed,
    `Pre-deduction failed: the remaining ${what} is ${formatNano(remaining)}, but this request requires a pre-deduction of ${formatNano(required)} (estimated from its size and max tokens). Lower max_tokens or top up.`);
}
