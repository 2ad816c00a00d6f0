// Admission inside a realtime session: each response (a client's response.create, or one
// the upstream starts by itself on server VAD) is admitted like a request, against the live
// config (a token or user disabled, expired or removed since the session opened ends it),
// the token's quota, the user's balance and the rate limits, with its worst case reserved.
// Each response's charge settles its own reservation when its usage comes (realtime-charges:
// its own usage-log entry, committed before the event is relayed), and each transcription's
// is charged as it comes, so the next admission sees the spend; a transcription that uses
// the balance up ends the session.

import { costOf } from "../billing/cost.js";
import { log } from "../observability/log.js";
import { errors } from "../errors/catalogue.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { Usage } from "../protocols/usage.js";
import type { Group, Model, Runtime, Token, User } from "../runtime/types.js";
import type { Accounts, Admitter, LimitHolds, Reservation } from "../state/interfaces.js";
import type { AccountDirectory } from "../accounts/directory.js";
import { accountStanding } from "./account-standing.js";
import { tokenBudgets, tokensFull, tooLargeForBudget, totalTokens } from "./admission-limits.js";
import type { RealtimeCharges } from "./realtime-charges.js";
import type { Used } from "./realtime-meter.js";
import { modelWindow, tokenWindows, windowFull } from "./rate-windows.js";
import { stateFailure } from "./state-failure.js";

/** One admitted response: its entry's id, its reservation and token-budget holds. */
interface Admitted {
  readonly id: string;
  readonly reservation: Reservation;
  readonly holds: LimitHolds;
  /** Epoch ms the upstream started it. */
  startedAt?: number;
}

/** Most responses admitted and not yet started upstream: a client asking for more is ending
 * its own session (a response.create the upstream refused stays held until the end). */
const MAX_UNSTARTED = 16;

export interface SessionAdmissionOptions {
  readonly admitter: Admitter;
  /** Asked whether the money is used up after a transcription (no admission follows it). */
  readonly accounts: Accounts;
  /** The config in force now (it hot-reloads). */
  readonly live: () => Runtime;
  /** Finds the token and its user again (gateway.yaml's or stored ones, as they are now). */
  readonly directory: AccountDirectory;
  /** The session's request id: each response's and transcription's entry is named after it. */
  readonly requestId: string;
  /** Commits each response's and transcription's charge. */
  readonly charges: RealtimeCharges;
  /** The token as the session opened (found again by its key hash in the live config). */
  readonly token: Token;
  readonly model: Model;
  readonly group: Group;
}

export class SessionAdmission {
  readonly #o: SessionAdmissionOptions;
  /** Admitted on the client's response.create, not yet started upstream. */
  readonly #unstarted: Admitted[] = [];
  /** Started upstream, not done. */
  readonly #running: Admitted[] = [];
  /** Responses admitted (or charged without an admission) and transcriptions charged so far. */
  #responses = 0;
  #transcriptions = 0;
  /** Admission steps run one at a time, in the order the frames came. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(opts: SessionAdmissionOptions) {
    this.#o = opts;
  }

  /** Admits a client's response.create; resolves to the error that ends the session, if refused. */
  admitCreate(worst: Usage): Promise<GatewayError | undefined> {
    return this.#serial(async () => {
      if (this.#unstarted.length >= MAX_UNSTARTED) {
        return new GatewayError(errors.realtimeTooManyResponses);
      }
      const admitted = await this.#admit(worst);
      if (admitted instanceof GatewayError) return admitted;
      this.#unstarted.push(admitted);
      return undefined;
    });
  }

  /** The upstream started a response: the client's admitted one, or (server VAD, or a
   * create the gateway did not see as one) one admitted now. */
  started(worst: Usage): Promise<GatewayError | undefined> {
    return this.#serial(async () => {
      const admitted = this.#unstarted.shift() ?? await this.#admit(worst);
      if (admitted instanceof GatewayError) return admitted;
      admitted.startedAt = Date.now();
      this.#running.push(admitted);
      return undefined;
    });
  }

  /**
   * A response ended with `used` (reported, or its estimate): its charge settles its
   * reservation, durably. Resolves once committed; rejects with the state failure when it
   * could not be (the event reporting it must then be withheld).
   */
  responseDone(used: Used): Promise<void> {
    return this.#serial(async () => {
      const done = this.#running.shift();
      await this.#commitResponse(done, used);
    });
  }

  /** An input transcription reported `used`: charged at once, durably. Resolves once
   * committed; rejects with the state failure when it could not be. */
  transcribed(used: Used): Promise<void> {
    return this.#serial(async () => {
      await this.#o.charges.commit({ id: `${this.#o.requestId}-t${++this.#transcriptions}`, ...used, startedAt: Date.now() });
    });
  }

  /** Whether the token and its user are still current and their money not used up (after a
   * transcription: no admission follows it); resolves to the error that ends the session if not. */
  stillFunded(): Promise<GatewayError | undefined> {
    return this.#serial(() => this.#funded());
  }

  /**
   * The session is over: a response cut mid-way (`unreported`: the meter's estimate) is
   * charged as its entry, settling its reservation; every other hold goes back uncharged.
   * A charge that cannot be committed is logged (nothing is left to withhold).
   */
  end(unreported: Used | undefined): Promise<void> {
    return this.#serial(async () => {
      const cut = this.#running.shift();
      if (unreported) {
        await this.#commitResponse(cut, unreported).catch((err: unknown) => log.error("realtime charge not recorded", {
          requestId: this.#o.requestId, error: String((err as { cause?: unknown }).cause ?? err),
        }));
      } else if (cut) {
        await this.#release(cut);
      }
      for (const a of [...this.#unstarted.splice(0), ...this.#running.splice(0)]) await this.#release(a);
    });
  }

  async #commitResponse(admitted: Admitted | undefined, used: Used): Promise<void> {
    await this.#o.charges.commit({
      id: admitted?.id ?? this.#nextResponseId(), reservation: admitted?.reservation, holds: admitted?.holds,
      ...used, startedAt: admitted?.startedAt ?? Date.now(),
    });
  }

  #serial<T>(step: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(step);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  /** The token and its user as they are now, or the error that ends the session. */
  async #current(runtime: Runtime): Promise<{ token: Token; user: User } | GatewayError> {
    const { directory } = this.#o;
    let token: Token | undefined;
    let owner: User | undefined;
    try {
      token = await directory.token(runtime, this.#o.token.keyHash);
      if (!token) return new GatewayError(errors.invalidToken);
      owner = await directory.user(runtime, token.user);
    } catch (err) {
      return stateFailure(err, "accounts");
    }
    const user = accountStanding(token, owner, Date.now());
    if (user instanceof GatewayError) return user;
    if (token.allowModel && !token.allowModel(this.#o.model.name)) return new GatewayError(errors.modelNotAllowed);
    return { token, user };
  }

  /** One response's admission: windows, token budgets and its worst case reserved. */
  async #admit(worst: Usage): Promise<Admitted | GatewayError> {
    const runtime = this.#o.live();
    const current = await this.#current(runtime);
    if (current instanceof GatewayError) return current;
    const { token, user } = current;
    const { model, group } = this.#o;
    const ofModel = modelWindow(model);
    const windows = [...tokenWindows(runtime, token, user) ?? [], ...ofModel ? [ofModel] : []];
    const budgets = tokenBudgets(runtime, token, user, group, model, totalTokens(worst));
    for (const b of budgets) if (b.tokens > b.max) return tooLargeForBudget(b);
    const amountNano = costOf(worst, model.price, group.multiplierPpm);
    const id = this.#nextResponseId();
    try {
      const admitted = await this.#o.admitter.admit({ requestId: id, token, user, amountNano, windows, slots: [], budgets, now: Date.now() });
      if (admitted.ok) return { id, reservation: admitted.reservation, holds: admitted.holds };
      return admitted.refused === "tokens" ? tokensFull(budgets[admitted.index], admitted.retryAfterMs)
        : windowFull(windows[admitted.index], admitted.retryAfterMs);
    } catch (err) {
      return stateFailure(err, "accounts");
    }
  }

  /** Refused when the token's quota or the user's balance is used up. */
  async #funded(): Promise<GatewayError | undefined> {
    const current = await this.#current(this.#o.live());
    if (current instanceof GatewayError) return current;
    try {
      await this.#o.accounts.checkNotExhausted(current.token, current.user);
      return undefined;
    } catch (err) {
      // The money is gone (the token's quota keeps its own 401): said as the session's.
      if (err instanceof GatewayError && err.status === 402) {
        return new GatewayError(errors.insufficientQuota, "The balance does not cover what this realtime session has used; the session was ended.");
      }
      return stateFailure(err, "accounts");
    }
  }

  /** Gives an admission back uncharged. A failure is left to the reservation's own expiry. */
  async #release(a: Admitted): Promise<void> {
    const { reservation, holds } = a;
    const charge = { requestId: reservation.id, token: reservation.token, user: reservation.user, costNano: 0n };
    await this.#o.admitter.finish({ reservation, holds, charge, usedTokens: 0, now: Date.now() }).catch(() => undefined);
  }

  #nextResponseId(): string {
    return `${this.#o.requestId}-r${++this.#responses}`;
  }
}
