// The smallest real request `gateway channels test` and the periodic key probe
// (routing/key-recovery.ts) send a channel's upstream, in the channel's own protocol: a
// one-word prompt and an output limit of a few tokens, plain or streamed. Paths and the
// protocol's fixed headers come from the provider manifests; the key's headers are added
// by the caller.

import { DEFAULT_ANTHROPIC_VERSION } from "../providers/anthropic/manifest.js";
import { providers } from "../providers/index.js";
import type { Protocol } from "../runtime/types.js";

/** The prompt: one word, so a test costs a handful of tokens. */
export const PROBE_PROMPT = "Hi";
/** The output limit: enough for any model to answer, small enough to cost nothing to speak of. */
export const PROBE_MAX_TOKENS = 8;

export interface ProbeRequest {
  /** The API path (and query), appended to the channel's base_url. */
  readonly path: string;
  /** Headers beside the key's and the content type. */
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** The request for `upstreamModel` on a channel of `protocol`, streamed when `stream`. */
export function probeRequest(protocol: Protocol, upstreamModel: string, stream: boolean): ProbeRequest {
  switch (protocol) {
    case "openai":
      return {
        path: providers.openai.paths.chat,
        headers: {},
        // max_completion_tokens: reasoning models refuse the deprecated max_tokens (as the gateway's encoder).
        body: JSON.stringify({
          model: upstreamModel, messages: [{ role: "user", content: PROBE_PROMPT }], max_completion_tokens: PROBE_MAX_TOKENS,
          ...(stream && { stream: true }),
        }),
      };
    case "anthropic":
      return {
        path: providers.anthropic.paths.messages,
        headers: { "anthropic-version": DEFAULT_ANTHROPIC_VERSION },
        body: JSON.stringify({
          model: upstreamModel, max_tokens: PROBE_MAX_TOKENS, messages: [{ role: "user", content: PROBE_PROMPT }],
          ...(stream && { stream: true }),
        }),
      };
    case "gemini": {
      // A model written as Google lists it ("models/gemini-2.5-flash") names the same model.
      const model = encodeURIComponent(upstreamModel.replace(/^models\//, ""));
      return {
        path: `${providers.gemini.paths.models}/${model}:${stream ? "streamGenerateContent?alt=sse" : "generateContent"}`,
        headers: {},
        body: JSON.stringify({
          contents: [{ role: "user", parts: [{ text: PROBE_PROMPT }] }], generationConfig: { maxOutputTokens: PROBE_MAX_TOKENS },
        }),
      };
    }
  }
}
