// Components an answer reported that its model's price does not name (audio tokens on a
// model priced for text, 1-hour cache writes without their ratio…): billed at the closest
// base price, never dropped, and each warned once per model so the operator can add it.

import type { TokenComponent } from "../billing/components.js";
import { log } from "../observability/log.js";

/** Model and component pairs remembered before warnings stop (a bound on what many
 * models' names can make this hold). */
const MAX_REMEMBERED = 10_000;

/** Warns once per model and component; one per process, made with the lifecycle. */
export class PriceFallbacks {
  readonly #warned = new Set<string>();

  /** Warns about each component of `model` not warned about yet. */
  note(model: string, components: readonly TokenComponent[]): void {
    for (const component of components) {
      const key = `${model}\u0000${component}`;
      if (this.#warned.has(key) || this.#warned.size >= MAX_REMEMBERED) continue;
      this.#warned.add(key);
      log.warn("the price list has no price for a component an answer reported; it is billed at the closest base price", {
        model, component, billedAs: closestBase[component],
      });
    }
  }
}

/** What each component without its own price is billed as (billing/cost.ts). */
const closestBase: Readonly<Record<TokenComponent, string>> = {
  input: "input", cache_read: "cache_read", cache_write: "cache_write",
  cache_write_1h: "cache_write (cache_write_ratio)", audio_input: "input", audio_cache_read: "input × cache_read_ratio",
  image_input: "input", output: "output", reasoning: "output", audio_output: "output", image_output: "output",
};
