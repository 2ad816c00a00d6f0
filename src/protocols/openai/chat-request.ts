// Prepares a chat-completions body for an OpenAI-protocol upstream. Bytes pass unchanged
// unless a change is needed: the model_map rename, or asking for stream usage.

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
export function prepareChatBody(
  raw: Buffer,
  json: Record<string, unknown>,
  upstreamModel: string,
): PreparedChat {
  const rename = upstreamModel !== json.model;
  const addUsage = isStream(json) && !clientWantsUsage(json);
  if (!rename && !addUsage) return { body: raw, stripUsage: false };
  const next: Record<string, unknown> = { ...json, model: upstreamModel };
  if (addUsage) {
    const opts = json.stream_options;
    next.stream_options = { ...(opts && typeof opts === "object" ? opts : {}), include_usage: true };
  }
  return { body: Buffer.from(JSON.stringify(next)), stripUsage: addUsage };
}
