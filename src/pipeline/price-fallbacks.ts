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
      // What it is billed as depends on the price (a ratio, a cache price of its own):
      // `gateway check --prices` shows it from the same rates.
      log.warn("the price list has no price for a component an answer reported; it is billed at the closest base price", {
        model, component, see: `gateway check --prices ${model}`,
      });
    }
  }
}
