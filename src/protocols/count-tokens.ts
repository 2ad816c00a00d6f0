// What a token-counting route needs of its protocol: the upstream count endpoint of a
// channel that speaks it (passed through), and for every other channel the request as the
// canonical form the local estimate counts, and the answer shape that estimate goes out in.

import type { CanonicalRequest } from "./canonical.js";
import type { PassthroughSpec } from "./passthrough.js";

/** A local estimate of a request's input tokens, by modality (billing/estimate.ts makes it). */
export interface InputEstimate {
  /** Text: system, messages, thinking, tool calls and results, tool definitions. */
  readonly text: number;
  /** Images (a fixed count each). */
  readonly image: number;
}

export interface CountTokensSpec {
  /** A count for a channel of the route's own protocol: its count endpoint, body as sent
   * but for the model_map rename. Its answer carries no usage: counting is not consumption. */
  readonly passthrough: PassthroughSpec;
  /** Checks the fields every count needs, before any channel is asked (400 naming the field).
   * The rest is the upstream's to judge, or the inbound adapter's when estimated. */
  check(json: Record<string, unknown>): void;
  /** The request decoded through the route's inbound adapter, for the estimate (400 naming
   * a field it cannot read). */
  canonical(json: Record<string, unknown>, pathModel: string | undefined): CanonicalRequest;
  /** The route's answer body for an estimate. */
  answer(estimate: InputEstimate): unknown;
}

/** A pass-through spec for a count endpoint: one JSON answer, never a stream, no usage. */
export function countPassthrough(spec: Pick<PassthroughSpec, "channelProtocol" | "path" | "body" | "portable">): PassthroughSpec {
  return Object.freeze<PassthroughSpec>({
    ...spec,
    isStream: () => false,
    bodyUsage: () => undefined,
    bodyChars: () => 0,
  });
}
