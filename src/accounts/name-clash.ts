// gateway.yaml's users and tokens and the store's never share a name: spend, usage and the
// audit log are kept by name, so a clash would mix two accounts' money. Checked when the
// gateway starts and at each reload (a clashing reload is refused, the running config kept);
// the admin API and the CLI refuse to create a name gateway.yaml declares.

import type { Runtime } from "../runtime/types.js";
import type { AccountStore } from "./store.js";

/** One problem per name both gateway.yaml and the store hold; empty when none. */
export async function nameClashes(store: AccountStore, runtime: Runtime): Promise<string[]> {
  const tokenNames = [...runtime.tokensByHash.values()].map((t) => t.name);
  const [users, tokens] = await Promise.all([
    store.takenNames("user", [...runtime.users.keys()]),
    store.takenNames("token", tokenNames),
  ]);
  return [
    ...users.sort().map((n) => `users.${n}: a user named '${n}' is also kept in the accounts store; rename one of them`),
    ...tokens.sort().map((n) => `tokens: a token named '${n}' is also kept in the accounts store; rename one of them`),
  ];
}
