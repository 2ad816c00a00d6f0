// What of a plan the accounts store holds already: users and tokens by name, and tokens
// whose key is in use under another name. A second import finds everything here and
// creates nothing.

import type { AccountStore } from "../../accounts/store.js";
import { importedFrom, type ImportPlan } from "./plan.js";

/** Names (and key hashes) the store has already. */
export interface ExistingAccounts {
  /** Users there from an earlier import of the same new-api user. */
  readonly users: ReadonlySet<string>;
  /** Users of the same name that did not come from this new-api user: left alone, with
   * their credit and tokens. */
  readonly foreignUsers: ReadonlySet<string>;
  readonly tokens: ReadonlySet<string>;
  /** Token names whose key belongs to another stored token. */
  readonly keysTaken: ReadonlySet<string>;
}

/** Looks the planned users and tokens up in `store`: names in batches (takenNames), then
 * each user found (its note) and each token not found (its key) one by one. */
export async function existingAccounts(plan: ImportPlan, store: AccountStore): Promise<ExistingAccounts> {
  const users = new Set<string>();
  const foreignUsers = new Set<string>();
  const tokens = new Set<string>();
  const keysTaken = new Set<string>();
  const takenUsers = new Set(await store.takenNames("user", plan.users.map((p) => p.user.name)));
  for (const planned of plan.users) {
    if (!takenUsers.has(planned.user.name)) continue;
    const stored = await store.user(planned.user.name);
    if (stored) (importedFrom(stored.note, planned) ? users : foreignUsers).add(planned.user.name);
  }
  const takenTokens = new Set(await store.takenNames("token", plan.tokens.map((p) => p.token.name)));
  for (const { token } of plan.tokens) {
    if (foreignUsers.has(token.user)) continue;
    if (takenTokens.has(token.name)) tokens.add(token.name);
    else if (await store.tokenByHash(token.keyHash)) keysTaken.add(token.name);
  }
  return { users, foreignUsers, tokens, keysTaken };
}
