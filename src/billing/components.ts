// The components a price list prices tokens by, and how a canonical usage splits into them:
// each total of a Usage (input, cacheRead, cacheWrite, output) less the parts the provider
// reported apart (audio, image, 1-hour writes, reasoning), so every token lands in exactly
// one component.

import type { Usage } from "../protocols/usage.js";

/** Token components, by the price list's names. */
export const tokenComponents = [
  "input",
  "cache_read",
  "cache_write",
  "cache_write_1h",
  "audio_input",
  "audio_cache_read",
  "image_input",
  "output",
  "reasoning",
  "audio_output",
  "image_output",
] as const;

/** One of tokenComponents. */
export type TokenComponent = (typeof tokenComponents)[number];

/** Token counts by component; every one present (0 when none). */
export type TokenQuantities = Record<TokenComponent, number>;

const count = (n: number | undefined): number => (n !== undefined && n > 0 ? Math.floor(n) : 0);

/** The tokens of `usage` by component. A part larger than what is left of its total is
 * cut to fit (a provider's inconsistent report never bills a token twice). */
export function tokenQuantities(usage: Usage): TokenQuantities {
  let input = count(usage.input);
  const audioInput = Math.min(count(usage.audioInput), input);
  input -= audioInput;
  const imageInput = Math.min(count(usage.imageInput), input);
  input -= imageInput;
  const cacheRead = count(usage.cacheRead);
  const audioCacheRead = Math.min(count(usage.audioCacheRead), cacheRead);
  const cacheWrite = count(usage.cacheWrite);
  const cacheWrite1h = Math.min(count(usage.cacheWrite1h), cacheWrite);
  let output = count(usage.output);
  const reasoning = Math.min(count(usage.reasoning), output);
  output -= reasoning;
  const audioOutput = Math.min(count(usage.audioOutput), output);
  output -= audioOutput;
  const imageOutput = Math.min(count(usage.imageOutput), output);
  output -= imageOutput;
  return {
    input,
    cache_read: cacheRead - audioCacheRead,
    cache_write: cacheWrite - cacheWrite1h,
    cache_write_1h: cacheWrite1h,
    audio_input: audioInput,
    audio_cache_read: audioCacheRead,
    image_input: imageInput,
    output,
    reasoning,
    audio_output: audioOutput,
    image_output: imageOutput,
  };
}

/** Every input token of a usage, cached or not: what a price tier's threshold is judged by. */
export function inputSize(usage: Usage): number {
  return count(usage.input) + count(usage.cacheRead) + count(usage.cacheWrite);
}
