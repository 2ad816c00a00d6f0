// Prepares a chat-completions body for an OpenAI-protocol upstream. Bytes pass unchanged
// unless a change is needed: the model_map rename, asking for stream usage, or the output
// limit the request reserved for when the client set none.

import { limitedBody, type PassRequest } from "../passthrough.js";

/** The output limit fields of chat-completions; the first is set when none is: reasoning
 * models refuse the deprecated max_tokens. */
const LIMIT_FIELDS = ["max_completion_tokens", "max_tokens"] as const;

export interface PreparedChat {
  readonly body: Buffer;
  /** The gateway asked for usage the client did not: strip the usage chunk on the way back. */
  readonly stripUsage: boolean;
}

/** Whether the client asked for a stream. */
export function isStream(json: Record<string, unknown>): boolean {
  return json.stream === true;
}

function clientWantsUsage(json: Record<string, unknown>): boolean {
  const opts = json.stream_options;
  return !!opts && typeof opts === "object" && (opts as Record<string, unknown>).include_usage === true;
}

/** Builds the upstream body; re-serialises only when something has to change. */
export function prepareChatBody(req: PassRequest, upstreamModel: string): PreparedChat {
  const json = req.json;
  const addUsage = isStream(json) && !clientWantsUsage(json);
  if (!addUsage) return { body: limitedBody(req, upstreamModel, LIMIT_FIELDS), stripUsage: false };
  const opts = json.stream_options;
  const streamOptions = { ...(opts && typeof opts === "object" ? opts : {}), include_usage: true };
  return { body: limitedBody(req, upstreamModel, LIMIT_FIELDS, { stream_options: streamOptions }), stripUsage: true };
}
