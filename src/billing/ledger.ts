// The ledger: reserves a request's worst-case cost against its token's quota and its
// user's balance before the upstream call, then settles to the real cost or releases.
// Check-and-reserve runs in one synchronous step, so concurrent requests cannot overspend.

import { errors } from "../errors/catalogue.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { RefundResult, Store, UsageEntry } from "../state/store.js";
import type { Token, User } from "../runtime/types.js";
import { formatNano } from "./cost.js";

/** What the ledger tracks of one token or user. Kept for the process's life (one per name
 * ever used), and only its fields change: a Map whose entries churn with every request
 * would, once old, keep each request's values alive until a full GC (see server.ts). */
interface Account {
  /** Settled spend: read from the store when the account is first used, then kept
   * current by settle(). */
  spent: bigint;
  /** Reserved by requests in flight. Held in memory: a crash ends every request in
   * flight, so what a crash leaves behind is released by construction and never charged. */
  reserved: bigint;
}

/** A pre-deduction in flight; settle or release it exactly once. */
export interface Reservation {
  readonly token: string;
  readonly user: string;
  readonly amountNano: bigint;
  done: boolean;
}

/** A reservation with the accounts it holds money in, so releasing it looks nothing up. */
interface Held extends Reservation {
  readonly tokenAccount: Account;
  readonly userAccount: Account;
}

export class Ledger {
  readonly #store: Store;
  readonly #tokens = new Map<string, Account>();
  readonly #users = new Map<string, Account>();
  #held = 0;

  constructor(store: Store) {
    this.#store = store;
  }

  #token(name: string): Account {
    return accountOf(this.#tokens, name, () => this.#store.spentByToken(name));
  }

  #user(name: string): Account {
    return accountOf(this.#users, name, () => this.#store.spentByUser(name));
  }

  /** Settled spend of a token and a user. */
  spentByToken(token: string): bigint {
    return this.#token(token).spent;
  }

  spentByUser(user: string): bigint {
    return this.#user(user).spent;
  }

  /** Throws 401 when a token's quota is used up, 402 when its user's balance is. */
  checkNotExhausted(token: Token, user: User): void {
    exhausted(token, this.#token(token.name), user, this.#user(user.name));
  }

  /** Reserves `amountNano` or throws 402 stating what remains and what was required. */
  reserve(token: Token, user: User, amountNano: bigint): Reservation {
    const tokenAccount = this.#token(token.name);
    const userAccount = this.#user(user.name);
    exhausted(token, tokenAccount, user, userAccount);
    if (token.quotaNano !== undefined) {
      const left = token.quotaNano - tokenAccount.spent - tokenAccount.reserved;
      if (left < amountNano) throw preDeductionFailed("token quota", left, amountNano);
    }
    const left = user.creditNano - userAccount.spent - userAccount.reserved;
    if (left < amountNano) throw preDeductionFailed("balance", left, amountNano);
    tokenAccount.reserved += amountNano;
    userAccount.reserved += amountNano;
    const held: Held = { token: token.name, user: user.name, amountNano, done: false, tokenAccount, userAccount };
    this.#held++;
    return held;
  }

  /**
   * Records the request with its real cost and frees the reservation, in one synchronous
   * step (so the next reservation sees the spend); resolves once the entry and its spend
   * are durable, rejects when the store could not write them. The spend stays counted here
   * either way: money an upstream served is never offered again.
   */
  settle(reservation: Reservation | undefined, entry: UsageEntry): Promise<void> {
    if (reservation) this.release(reservation);
    if (entry.costNano === 0n) return this.#store.record(entry);
    // Load before recording, so the cached total is not counted from a store that
    // already holds this entry.
    const token = this.#token(entry.token);
    const user = this.#user(entry.user);
    const committed = this.#store.record(entry);
    token.spent += entry.costNano;
    user.spent += entry.costNano;
    return committed;
  }

  /** Frees a reservation without charging. Safe to call twice. */
  release(reservation: Reservation): void {
    if (reservation.done) return;
    reservation.done = true;
    this.#held--;
    const held = reservation as Held;
    held.tokenAccount.reserved -= reservation.amountNano;
    held.userAccount.reserved -= reservation.amountNano;
  }

  /** Reservations in flight (neither settled nor released). */
  get reservationsHeld(): number {
    return this.#held;
  }

  /** Amount currently reserved for a user (in flight). */
  reservedByUser(user: string): bigint {
    return this.#users.get(user)?.reserved ?? 0n;
  }

  /**
   * Refunds a settled request (an asynchronous job the upstream reported failed): the store
   * marks its entry and lowers the spend exactly once, and the totals cached here follow in
   * the same synchronous step. An account not cached yet reads the lowered total when first
   * used. Throws what the store throws.
   */
  refund(requestId: string, at = Date.now()): RefundResult {
    const result = this.#store.refund(requestId, at);
    if (result.kind === "refunded") {
      const token = this.#tokens.get(result.token);
      const user = this.#users.get(result.user);
      if (token) token.spent -= result.costNano;
      if (user) user.spent -= result.costNano;
    }
    return result;
  }
}

function accountOf(accounts: Map<string, Account>, name: string, loadSpent: () => bigint): Account {
  let account = accounts.get(name);
  if (!account) {
    account = { spent: loadSpent(), reserved: 0n };
    accounts.set(name, account);
  }
  return account;
}

function exhausted(token: Token, tokenAccount: Account, user: User, userAccount: Account): void {
  if (token.quotaNano !== undefined && tokenAccount.spent >= token.quotaNano) {
    throw new GatewayError(errors.tokenQuotaExhausted);
  }
  if (userAccount.spent >= user.creditNano) throw new GatewayError(errors.insufficientQuota);
}

function preDeductionFailed(what: string, left: bigint, required: bigint): GatewayError {
  const remaining = left > 0n ? left : 0n;
  return new GatewayError(errors.preDeductionFailed,
    `Pre-deduction failed: the remaining ${what} is ${formatNano(remaining)}, but this request requires a pre-deduction of ${formatNano(required)} (estimated from its size and max tokens). Lower max_tokens or top up.`);
}
