// Fits a model-calling request to what its model supports (models.<name>.capabilities), on
// every route, before anything is reserved or sent: reasoning fields toward a model without
// reasoning are dropped, an output limit above the model's maximum is clamped. Each change
// is named (x-gateway-dropped-fields, the usage log) rather than relayed to fail upstream.

import type { Capabilities } from "../runtime/types.js";

/** Where a protocol keeps its reasoning fields and output limits: top-level names, or
 * members of a nested object (generate-content's generationConfig). */
interface Fields {
  /** The object holding the fields (undefined: the body itself), in both spellings. */
  readonly within?: readonly string[];
  readonly reasoning: readonly string[];
  readonly limits: readonly string[];
}

const byRoute: Readonly<Record<string, Fields>> = {
  "chat-completions": { reasoning: ["reasoning_effort"], limits: ["max_completion_tokens", "max_tokens"] },
  responses: { reasoning: ["reasoning"], limits: ["max_output_tokens"] },
  messages: { reasoning: ["thinking"], limits: ["max_tokens"] },
  "generate-content": {
    within: ["generationConfig", "generation_config"],
    reasoning: ["thinkingConfig", "thinking_config"],
    limits: ["maxOutputTokens", "max_output_tokens"],
  },
};

/** The request fitted to the model: the new body and what changed, or undefined when it
 * already fits (the client's bytes go as they are). */
export function fitToCapabilities(
  route: string, json: Record<string, unknown>, caps: Capabilities,
): { readonly json: Record<string, unknown>; readonly changed: readonly string[] } | undefined {
  const fields = byRoute[route];
  if (!fields) return undefined;
  const changed: string[] = [];
  const edit = (obj: Record<string, unknown>, prefix: string): Record<string, unknown> => {
    let out = obj;
    const own = () => (out === obj ? (out = { ...obj }) : out);
    if (caps.reasoning === false) {
      for (const name of fields.reasoning) {
        if (obj[name] === undefined) continue;
        delete own()[name];
        changed.push(prefix + name);
      }
    }
    if (caps.maxOutput !== undefined) {
      for (const name of fields.limits) {
        const v = obj[name];
        if (typeof v !== "number" || v <= caps.maxOutput) continue;
        own()[name] = caps.maxOutput;
        changed.push(`${prefix}${name} (clamped to ${caps.maxOutput})`);
      }
    }
    return out;
  };
  let next: Record<string, unknown>;
  if (fields.within === undefined) next = edit(json, "");
  else {
    next = json;
    for (const key of fields.within) {
      const inner = json[key];
      if (inner === null || typeof inner !== "object" || Array.isArray(inner)) continue;
      const edited = edit(inner as Record<string, unknown>, `${key}.`);
      if (edited !== inner) next = { ...next, [key]: edited };
    }
  }
  if (route === "messages" && caps.maxOutput !== undefined) next = heldUnderLimit(next, changed);
  return changed.length === 0 ? undefined : { json: next, changed };
}

/** The messages API wants thinking.budget_tokens below max_tokens: a budget a clamped limit
 * no longer exceeds is lowered with it (and named). */
function heldUnderLimit(json: Record<string, unknown>, changed: string[]): Record<string, unknown> {
  const thinking = json.thinking as { budget_tokens?: unknown } | undefined;
  const max = json.max_tokens;
  if (typeof max !== "number" || typeof thinking?.budget_tokens !== "number" || thinking.budget_tokens < max) return json;
  const budget = Math.max(1024, max - 1);
  changed.push(`thinking.budget_tokens (clamped to ${budget})`);
  return { ...json, thinking: { ...thinking, budget_tokens: budget } };
}
