// Admission inside a realtime session: each response (a client's response.create, or one
// the upstream starts by itself on server VAD) is admitted like a request, against the live
// config (a token or user disabled, expired or removed since the session opened ends it),
// the token's quota, the user's balance and the rate limits; and the money each response or
// transcription used is held against the balance at once, so the next admission sees it.
// The session's charge is settled in its one usage entry when it ends; these holds are
// given back only after that (release()), so the balance never looks larger than it is.

import { costOf } from "../billing/cost.js";
import { errors } from "../errors/catalogue.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { Usage } from "../protocols/usage.js";
import type { Group, Model, Runtime, Token, User } from "../runtime/types.js";
import type { Admitter, LimitHolds, Reservation } from "../state/interfaces.js";
import { tokenBudgets, tokensFull, tooLargeForBudget, totalTokens } from "./admission-limits.js";
import { billable } from "./realtime-meter.js";
import { modelWindow, tokenWindows, windowFull } from "./rate-windows.js";
import { stateFailure } from "./state-failure.js";

/** One admitted response: its reservation and token-budget holds. */
interface Admitted {
  readonly reservation: Reservation;
  readonly holds: LimitHolds;
}

/** Most responses admitted and not yet started upstream: a client asking for more is ending
 * its own session (a response.create the upstream refused stays held until the end). */
const MAX_UNSTARTED = 16;
/** A shared store lets a reservation lapse after a few minutes (so a dead process's holds
 * free themselves): the session's spend is held anew before an admission once it is older. */
const SPENT_HOLD_REFRESH_MS = 60_000;

export interface SessionAdmissionOptions {
  readonly admitter: Admitter;
  /** The config in force now (it hot-reloads). */
  readonly live: () => Runtime;
  /** The session's request id: each admission is named after it. */
  readonly requestId: string;
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
  /** What the session used so far, held against the balance until it is settled. */
  #spentNano = 0n;
  #spentHold: Reservation | undefined;
  #spentHeldAt = 0;
  #seq = 0;
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
      this.#running.push(admitted);
      return undefined;
    });
  }

  /**
   * The upstream reported usage (a response's at its end, when `responseDone`, or an input
   * transcription's): its cost is held against the balance in place of the response's
   * reservation. Resolves to the error that ends the session when the balance cannot hold it.
   */
  used(usage: Usage, seconds: number, responseDone: boolean): Promise<GatewayError | undefined> {
    return this.#serial(async () => {
      const { model, group } = this.#o;
      const billed = billable(usage, seconds, model.price);
      const cost = costOf(billed.usage, model.price, group.multiplierPpm, { ...billed.units, requests: 0 });
      if (responseDone) {
        const done = this.#running.shift();
        if (done) await this.#finish(done.reservation, done.holds, totalTokens(usage));
      }
      if (cost === 0n) return undefined;
      this.#spentNano += cost;
      return this.#holdSpent();
    });
  }

  /** Gives back every hold: call once the session's charge is settled (or abandoned). */
  release(): Promise<void> {
    return this.#serial(async () => {
      for (const a of [...this.#unstarted.splice(0), ...this.#running.splice(0)]) await this.#finish(a.reservation, a.holds, 0);
      if (this.#spentHold) await this.#finish(this.#spentHold, undefined, 0);
      this.#spentHold = undefined;
    });
  }

  #serial<T>(step: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(step);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  /** The token and its user as the live config has them, or the error that ends the session. */
  #current(runtime: Runtime): { token: Token; user: User } | GatewayError {
    const token = runtime.tokensByHash.get(this.#o.token.keyHash);
    if (!token) return new GatewayError(errors.invalidToken);
    if (!token.active) return new GatewayError(errors.tokenDisabled);
    if (token.expiresAt !== undefined && token.expiresAt <= Date.now()) return new GatewayError(errors.tokenExpired);
    const user = runtime.users.get(token.user);
    if (!user || !user.active) return new GatewayError(errors.userDisabled);
    if (!user.groups.has(token.group)) return new GatewayError(errors.groupNotAllowed);
    if (token.allowModel && !token.allowModel(this.#o.model.name)) return new GatewayError(errors.modelNotAllowed);
    return { token, user };
  }

  /** One response's admission: windows, token budgets and its worst case reserved. */
  async #admit(worst: Usage): Promise<Admitted | GatewayError> {
    const runtime = this.#o.live();
    const current = this.#current(runtime);
    if (current instanceof GatewayError) return current;
    const { token, user } = current;
    if (this.#spentNano > 0n && Date.now() - this.#spentHeldAt > SPENT_HOLD_REFRESH_MS) {
      const lapsed = await this.#holdSpent();
      if (lapsed) return lapsed;
    }
    const { model, group } = this.#o;
    const ofModel = modelWindow(model);
    const windows = [...tokenWindows(runtime, token.name) ?? [], ...ofModel ? [ofModel] : []];
    const budgets = tokenBudgets(runtime, token, group, model, totalTokens(worst));
    for (const b of budgets) if (b.tokens > b.max) return tooLargeForBudget(b);
    const amountNano = costOf(worst, model.price, group.multiplierPpm);
    try {
      const admitted = await this.#o.admitter.admit({
        requestId: this.#nextId("r"), token, user, amountNano, windows, slots: [], budgets, now: Date.now(),
      });
      if (admitted.ok) return { reservation: admitted.reservation, holds: admitted.holds };
      return admitted.refused === "tokens" ? tokensFull(budgets[admitted.index], admitted.retryAfterMs)
        : windowFull(windows[admitted.index], admitted.retryAfterMs);
    } catch (err) {
      return stateFailure(err, "accounts");
    }
  }

  /** Holds the session's spend so far in one reservation, in place of the previous one. */
  async #holdSpent(): Promise<GatewayError | undefined> {
    const previous = this.#spentHold;
    this.#spentHold = undefined;
    if (previous) await this.#finish(previous, undefined, 0);
    const runtime = this.#o.live();
    const current = this.#current(runtime);
    if (current instanceof GatewayError) return current;
    try {
      const admitted = await this.#o.admitter.admit({
        requestId: this.#nextId("s"), token: current.token, user: current.user, amountNano: this.#spentNano, windows: [], now: Date.now(),
      });
      if (!admitted.ok) return new GatewayError(errors.insufficientQuota);
      this.#spentHold = admitted.reservation;
      this.#spentHeldAt = Date.now();
      return undefined;
    } catch (err) {
      // The money is gone (the token's quota keeps its own 401): said as the session's.
      if (err instanceof GatewayError && err.status === 402) {
        return new GatewayError(errors.insufficientQuota, "The balance does not cover what this realtime session has used; the session was ended.");
      }
      return stateFailure(err, "accounts");
    }
  }

  /** Frees a hold without charging (the session's one entry carries the charge). A failure
   * is left to the reservation's own expiry: the charge does not depend on it. */
  async #finish(reservation: Reservation, holds: LimitHolds | undefined, usedTokens: number): Promise<void> {
    const charge = { requestId: reservation.id, token: reservation.token, user: reservation.user, costNano: 0n };
    await this.#o.admitter.finish({ reservation, holds, charge, usedTokens, now: Date.now() }).catch(() => undefined);
  }

  #nextId(kind: "r" | "s"): string {
    return `${this.#o.requestId}.${kind}${++this.#seq}`;
  }
}
