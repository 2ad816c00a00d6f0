// What a responses request asks the provider to keep or look up: the response itself
// (store, on by default at OpenAI), an earlier stored response (previous_response_id, or
// an item_reference into one), a stored prompt, a conversation, a background job. All of
// them live under the operator's one upstream account, shared by every tenant, so each is
// refused unless the model allows it (models.<name>.store / stored_prompts); conversations
// and background responses are never served (the gateway routes no /v1/conversations and
// no GET /v1/responses/{id}: their ids could only name someone else's objects).

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { Model } from "../../runtime/types.js";
import { spliceField } from "../passthrough.js";

/** What the gateway must do about a request's stored state. */
export interface ResponsesState {
  /** The stored response it continues: its creator must be the caller (else 404). */
  readonly previous?: string;
  /** Its answer will be stored at the provider: record the caller as its creator. */
  readonly stored: boolean;
  /** It left `store` out: it goes upstream as `store: false` (OpenAI's default is true). */
  readonly addStoreFalse: boolean;
}

function refused(message: string): GatewayError {
  return new GatewayError(errors.storedStateNotAllowed, message);
}

/** Reads and judges a responses request's stored state; throws the 400 of a refusal. */
export function responsesState(json: Record<string, unknown>, model: Model): ResponsesState {
  if (json.conversation != null) {
    throw refused("conversation cannot be used through this gateway (conversations live under the operator's account): send the whole conversation in input.");
  }
  if (json.background === true) {
    throw refused("background must be false: a background response can only be fetched from the provider's store, which this gateway does not serve.");
  }
  if (json.prompt != null && !model.allowStoredPrompts) {
    throw refused(`prompt (a stored prompt template) cannot be used with the model '${model.name}': send instructions and input instead.`);
  }
  const previous = json.previous_response_id;
  if (!model.allowStore) {
    if (json.store === true) {
      throw refused(`store: true is not available for the model '${model.name}': leave store out (or false); nothing is kept at the provider.`);
    }
    if (previous != null) {
      throw refused(`previous_response_id cannot be used with the model '${model.name}': the gateway keeps no conversations for it (its responses are not stored at the provider). Send the whole conversation in input.`);
    }
    if (referencesItems(json.input)) {
      throw refused(`item_reference cannot be used with the model '${model.name}': its responses are not stored. Send the items themselves.`);
    }
    return { stored: false, addStoreFalse: json.store === undefined };
  }
  return { previous: typeof previous === "string" ? previous : undefined, stored: json.store !== false, addStoreFalse: false };
}

/** Whether an input list names a stored item by reference. */
function referencesItems(input: unknown): boolean {
  if (!Array.isArray(input)) return false;
  for (const item of input) {
    if (item !== null && typeof item === "object" && (item as { type?: unknown }).type === "item_reference") return true;
  }
  return false;
}

/** The body with `"store":false` put first: the client's bytes otherwise untouched (no
 * re-serialising); only for a body without a `store` key (a duplicate key would win). */
export function withStoreFalse(body: Buffer): Buffer {
  return spliceField(body, "store", "false");
}
