// Reads generate-content `usageMetadata`. `promptTokenCount` includes the cached tokens
// (`cachedContentTokenCount`); thoughts are counted apart from `candidatesTokenCount`;
// tool-use prompt tokens are input too.

import { tokenCount, type Usage } from "../usage.js";

interface GeminiUsage {
  promptTokenCount?: number;
  cachedContentTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
}

/** Normalises a Gemini `usageMetadata` object; undefined when there is none. */
export function normalizeGeminiUsage(raw: unknown): Usage | undefined {
  if (!raw || typeof raw !== "object") return undefined;
  const u = raw as GeminiUsage;
  const prompt = tokenCount(u.promptTokenCount) + tokenCount(u.toolUsePromptTokenCount);
  const cached = Math.min(tokenCount(u.cachedContentTokenCount), prompt);
  const thoughts = tokenCount(u.thoughtsTokenCount);
  return {
    input: prompt - cached,
    cacheRead: cached,
    cacheWrite: 0,
    output: tokenCount(u.candidatesTokenCount) + thoughts,
    reasoning: thoughts,
  };
}
