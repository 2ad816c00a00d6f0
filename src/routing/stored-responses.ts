// Responses stored at the provider live under the operator's one upstream account: this
// remembers which user created each (in the keyed store, `resp:` keys, for as long as the
// provider keeps them), so only that user may name one again (previous_response_id).

import type { KeyedStore } from "../state/interfaces.js";

/** How long a stored response can be named: the provider keeps one 30 days. */
export const STORED_RESPONSE_TTL_MS = 30 * 24 * 3600_000;

const PREFIX = "resp:";

export class StoredResponses {
  readonly #keyed: KeyedStore;

  constructor(keyed: KeyedStore) {
    this.#keyed = keyed;
  }

  /** Records `user` as the creator of the stored response `id`. */
  remember(id: string, user: string): Promise<void> {
    return this.#keyed.set(PREFIX + id, user, STORED_RESPONSE_TTL_MS);
  }

  /** The user who created it, or undefined when the gateway did not see it stored (or it expired). */
  creator(id: string): Promise<string | undefined> {
    return this.#keyed.get(PREFIX + id);
  }
}
