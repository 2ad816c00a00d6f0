// Reads generate-content `usageMetadata`. `promptTokenCount` includes the cached tokens
// (`cachedContentTokenCount`); thoughts are counted apart from `candidatesTokenCount`;
// tool-use prompt tokens are input too. The `*TokensDetails` lists split each count by
// modality: AUDIO and IMAGE are priced apart (TEXT, VIDEO and DOCUMENT stay text input).

import { tokenCount, type ToolCalls, type Usage } from "../usage.js";

interface ModalityTokenCount {
  modality?: string;
  tokenCount?: number;
}

interface GeminiUsage {
  promptTokenCount?: number;
  cachedContentTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
  /** Of promptTokenCount (cached included), by modality. */
  promptTokensDetails?: readonly ModalityTokenCount[];
  /** Of cachedContentTokenCount, by modality. */
  cacheTokensDetails?: readonly ModalityTokenCount[];
  /** Of candidatesTokenCount, by modality. */
  candidatesTokensDetails?: readonly ModalityTokenCount[];
  /** Of toolUsePromptTokenCount, by modality. */
  toolUsePromptTokensDetails?: readonly ModalityTokenCount[];
}

/** Audio and image tokens of one details list (0 each when absent). */
function modalities(details: unknown): { audio: number; image: number } {
  let audio = 0;
  let image = 0;
  if (!Array.isArray(details)) return { audio, image };
  for (const d of details as readonly (ModalityTokenCount | null)[]) {
    if (d?.modality === "AUDIO") audio += tokenCount(d.tokenCount);
    else if (d?.modality === "IMAGE") image += tokenCount(d.tokenCount);
  }
  return { audio, image };
}

/** Normalises a Gemini `usageMetadata` object; undefined when there is none. */
export function normalizeGeminiUsage(raw: unknown): Usage | undefined {
  if (!raw || typeof raw !== "object") return undefined;
  const u = raw as GeminiUsage;
  const prompt = tokenCount(u.promptTokenCount) + tokenCount(u.toolUsePromptTokenCount);
  const cached = Math.min(tokenCount(u.cachedContentTokenCount), prompt);
  const thoughts = tokenCount(u.thoughtsTokenCount);
  const usage: Usage = {
    input: prompt - cached,
    cacheRead: cached,
    cacheWrite: 0,
    output: tokenCount(u.candidatesTokenCount) + thoughts,
    reasoning: thoughts,
  };
  if (u.promptTokensDetails || u.cacheTokensDetails || u.toolUsePromptTokensDetails || u.candidatesTokensDetails) modalityParts(usage, u);
  return usage;
}

/** The audio and image parts the details lists name: uncached input (prompt and tool-use
 * prompt, less what the cache held), cached audio, and output. */
function modalityParts(usage: Usage, u: GeminiUsage): void {
  const prompt = modalities(u.promptTokensDetails);
  const toolUse = modalities(u.toolUsePromptTokensDetails);
  const cache = modalities(u.cacheTokensDetails);
  const candidates = modalities(u.candidatesTokensDetails);
  const cachedAudio = Math.min(cache.audio, usage.cacheRead);
  const audioInput = prompt.audio + toolUse.audio - cachedAudio;
  const imageInput = prompt.image + toolUse.image - cache.image;
  if (audioInput > 0) usage.audioInput = audioInput;
  if (imageInput > 0) usage.imageInput = imageInput;
  if (cachedAudio > 0) usage.audioCacheRead = cachedAudio;
  if (candidates.audio > 0) usage.audioOutput = candidates.audio;
  if (candidates.image > 0) usage.imageOutput = candidates.image;
}

/** Distinct search queries one answer may name before more are not told apart (a bound on
 * what a hostile upstream can make us hold). */
const MAX_QUERIES = 1024;

/**
 * Grounding with Google Search, billed per search query the model ran: the distinct
 * `groundingMetadata.webSearchQueries` of an answer's candidates (a stream repeats them on
 * several chunks), or 1 for a grounded answer that names none.
 */
export class GroundingCount {
  readonly #queries = new Set<string>();
  #grounded = false;

  /** Reads one GenerateContentResponse (a whole answer or a stream chunk). */
  take(response: unknown): void {
    const candidates = (response as { candidates?: unknown } | null)?.candidates;
    if (!Array.isArray(candidates)) return;
    for (const candidate of candidates) {
      const grounding = (candidate as { groundingMetadata?: unknown } | null)?.groundingMetadata;
      if (!grounding || typeof grounding !== "object") continue;
      this.#grounded = true;
      const queries = (grounding as { webSearchQueries?: unknown }).webSearchQueries;
      if (!Array.isArray(queries)) continue;
      for (const q of queries) if (typeof q === "string" && this.#queries.size < MAX_QUERIES) this.#queries.add(q);
    }
  }

  /** The web searches counted so far; undefined when the answer was not grounded. */
  calls(): ToolCalls | undefined {
    if (!this.#grounded) return undefined;
    return { web_search: Math.max(1, this.#queries.size) };
  }
}

/** `usage` with the grounding searches of `count`, if any (a copy; usage absent stays so). */
export function withGrounding(usage: Usage | undefined, count: GroundingCount): Usage | undefined {
  const calls = usage && count.calls();
  return calls ? { ...usage, toolCalls: calls } : usage;
}

/** Usage of a whole GenerateContentResponse: its usageMetadata and grounding searches. */
export function geminiAnswerUsage(json: unknown): Usage | undefined {
  if (!json || typeof json !== "object") return undefined;
  const count = new GroundingCount();
  count.take(json);
  return withGrounding(normalizeGeminiUsage((json as { usageMetadata?: unknown }).usageMetadata), count);
}
