// Writes a plan's accounts through the store, as `import:new-api` in the audit log: each
// user (left as it is when its name is there), its opening credit (keyed
// `new-api:user:<id>:opening`, so it lands once however often the import runs), then each
// token by the hash of its original key. A stored user of the same name that did not come
// from this new-api user is someone else's: it gets no credit and no tokens.

import { KeyTaken, NameTaken, type AccountStore, type Actor } from "../../accounts/store.js";
import { importedFrom, type ImportPlan, type PlannedUser } from "./plan.js";

/** Who the audit log says made the changes. */
export const IMPORT_ACTOR: Actor = { actor: "import:new-api" };

/** What a run did. */
export interface ImportOutcome {
  readonly usersCreated: readonly string[];
  readonly usersThere: readonly string[];
  /** Stored users of the same name not imported from new-api: left alone. */
  readonly usersForeign: readonly string[];
  readonly tokensCreated: readonly string[];
  readonly tokensThere: readonly string[];
  /** Token names not created because their key is another token's. */
  readonly tokensKeyTaken: readonly string[];
  /** Credits added this run, and how many an earlier run had added. */
  readonly creditsAdded: number;
  readonly creditsThere: number;
  readonly creditNano: bigint;
}

type Outcome = { -readonly [K in keyof ImportOutcome]: ImportOutcome[K] extends readonly string[] ? string[] : ImportOutcome[K] };

/** Creates the user; false when a user of that name is someone else's. */
async function ensureUser(planned: PlannedUser, store: AccountStore, by: Actor, out: Outcome): Promise<boolean> {
  try {
    await store.createUser(planned.user, by);
    out.usersCreated.push(planned.user.name);
    return true;
  } catch (error) {
    if (!(error instanceof NameTaken)) throw error;
  }
  const stored = await store.user(planned.user.name);
  if (stored && importedFrom(stored.note, planned)) {
    out.usersThere.push(planned.user.name);
    return true;
  }
  out.usersForeign.push(planned.user.name);
  return false;
}

/** Applies the accounts part of `plan` to `store`. A store error stops it (a rerun resumes). */
export async function applyImport(plan: ImportPlan, store: AccountStore, by: Actor = IMPORT_ACTOR): Promise<ImportOutcome> {
  const out: Outcome = {
    usersCreated: [], usersThere: [], usersForeign: [], tokensCreated: [], tokensThere: [], tokensKeyTaken: [],
    creditsAdded: 0, creditsThere: 0, creditNano: 0n,
  };
  const ours = new Set<string>();
  for (const planned of plan.users) {
    if (!(await ensureUser(planned, store, by, out))) continue;
    ours.add(planned.user.name);
    if (planned.creditNano <= 0n) continue;
    const { created } = await store.addCredit({
      user: planned.user.name, amountNano: planned.creditNano, reason: `opening balance from new-api (user #${planned.newApiId})`,
      idempotencyKey: planned.creditKey,
    }, by);
    if (created) {
      out.creditsAdded++;
      out.creditNano += planned.creditNano;
    } else out.creditsThere++;
  }
  for (const { token } of plan.tokens) {
    if (!ours.has(token.user)) continue;
    try {
      await store.createToken(token, by);
      out.tokensCreated.push(token.name);
    } catch (error) {
      if (error instanceof NameTaken) out.tokensThere.push(token.name);
      else if (error instanceof KeyTaken) out.tokensKeyTaken.push(token.name);
      else throw error;
    }
  }
  return out;
}
