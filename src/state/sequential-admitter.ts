// Admission in this process: each window, each concurrency slot, each tokens-per-minute
// hold, then the reservation, one after the other. Each step is atomic on its own (the
// in-process limiter, slots, budgets and accounts answer synchronously), so the
// all-or-nothing promise holds by giving back what was taken when a later step refuses.

import type {
  Accounts, AdmitRequest, AdmitResult, Admitter, Finish, Hit, LimitHolds, Limiter, SlotTake, TokenBudgetTake, WindowTake,
} from "./interfaces.js";
import { BudgetCounters, HELD_RETRY_MS, usedBy } from "./budget-counters.js";
import type { BudgetSeeder } from "./budget-seed.js";
import { MemorySlots } from "./memory-slots.js";

const none: readonly never[] = [];

/** What an admitted request holds here, until Admitter.finish gives it back (once). */
class HeldHere implements LimitHolds {
  open = true;
  constructor(readonly requestId: string, readonly slots: readonly SlotTake[], readonly budgets: readonly TokenBudgetTake[]) {}
}

export class SequentialAdmitter implements Admitter {
  readonly #accounts: Accounts;
  readonly #limiter: Limiter;
  readonly #slots = new MemorySlots();
  readonly #budgets = new BudgetCounters();
  readonly #seed: BudgetSeeder | undefined;
  /** Seeds under way, by budget key: a burst of first requests reads the usage log once. */
  readonly #seeding = new Map<string, Promise<void>>();

  /** @param seed reads a new budget counter's past from the usage log (absent: budgets
   * start empty, as tokens per minute does) */
  constructor(accounts: Accounts, limiter: Limiter, seed?: BudgetSeeder) {
    this.#accounts = accounts;
    this.#limiter = limiter;
    this.#seed = seed;
  }

  async admit(request: AdmitRequest): Promise<AdmitResult> {
    const { windows, requestId, now } = request;
    const slots = request.slots ?? none;
    const budgets = request.budgets ?? none;
    for (const b of budgets) if (b.window && this.#budgets.needsSeed(b.key, b.window)) await this.#seeded(b);
    const hits: Hit[] = [];
    const holds: { slots: SlotTake[]; budgets: TokenBudgetTake[] } = { slots: [], budgets: [] };
    const giveBack = async () => {
      this.#free(holds.slots, holds.budgets);
      await this.#untake(windows, hits);
    };
    try {
      for (let i = 0; i < windows.length; i++) {
        const admission = await this.#limiter.take(windows[i].key, windows[i].window, now);
        if (!admission.ok) {
          await giveBack();
          return { ok: false, refused: "window", index: i, retryAfterMs: admission.retryAfterMs };
        }
        hits.push(admission.hit);
      }
      for (let i = 0; i < slots.length; i++) {
        if (!this.#slots.take(slots[i].key, slots[i].max)) {
          await giveBack();
          return { ok: false, refused: "slots", index: i, retryAfterMs: HELD_RETRY_MS };
        }
        holds.slots.push(slots[i]);
      }
      for (let i = 0; i < budgets.length; i++) {
        const wait = this.#budgets.hold(budgets[i].key, budgets[i].tokens, budgets[i].max, now, budgets[i].window);
        if (wait > 0) {
          await giveBack();
          return { ok: false, refused: "tokens", index: i, retryAfterMs: wait };
        }
        holds.budgets.push(budgets[i]);
      }
      const reservation = await this.#accounts.reserve(requestId, request.token, request.user, request.amountNano);
      const held: LimitHolds = new HeldHere(requestId, slots, budgets);
      return { ok: true, reservation, hits, holds: held };
    } catch (err) {
      // The refusal (or the failure) is what the caller must see; a hit not taken back
      // lapses with its window.
      await giveBack().catch(() => undefined);
      throw err;
    }
  }

  async finish({ reservation, holds, charge, usedTokens, now }: Finish): Promise<void> {
    try {
      if (reservation !== undefined || charge.costNano !== 0n) await this.#accounts.settle(reservation, charge);
    } finally {
      // Given back once: the slots and budgets count holds, they do not name them.
      if (holds instanceof HeldHere && holds.open) {
        holds.open = false;
        for (const s of holds.slots) this.#slots.free(s.key);
        for (const b of holds.budgets) this.#budgets.finish(b.key, b.tokens, usedBy(b, usedTokens, charge.costNano), now);
      }
    }
  }

  #free(slots: readonly SlotTake[], budgets: readonly TokenBudgetTake[]): void {
    for (const s of slots) this.#slots.free(s.key);
    for (const b of budgets) this.#budgets.finish(b.key, b.tokens, 0, 0);
  }

  /** Adds the usage log's past to a new budget counter (once, however many ask). */
  #seeded(budget: TokenBudgetTake): Promise<void> {
    const window = budget.window!;
    if (!this.#seed) {
      this.#budgets.seed(budget.key, window, []);
      return Promise.resolve();
    }
    let seeding = this.#seeding.get(budget.key);
    if (!seeding) {
      seeding = this.#seed(window).then((used) => this.#budgets.seed(budget.key, window, used))
        .finally(() => this.#seeding.delete(budget.key));
      this.#seeding.set(budget.key, seeding);
    }
    return seeding;
  }

  async #untake(windows: readonly WindowTake[], hits: readonly Hit[]): Promise<void> {
    for (let i = 0; i < hits.length; i++) await this.#limiter.refund(windows[i].key, hits[i]);
  }
}
