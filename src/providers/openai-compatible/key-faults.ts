// How OpenAI-compatible vendors say the key is at fault: OpenAI's rules (401/403 but for
// the codes that blame a request header; 429 insufficient_quota), plus 402 Payment Required
// (DeepSeek's "Insufficient Balance", OpenRouter's out of credits): the account is out of
// credit. OpenRouter answers 403 when a moderated model flags the *input* (its error then
// carries `metadata.reasons` / `flagged_input`): the client's request, not the key, so a
// client can never take a key out with flagged text. Judged by structure, never message text.

import { openaiProvider } from "../openai/manifest.js";
import { sure, type ErrorObject, type KeyFaultRules, type KeyVerdict } from "../provider.js";

function isModerationFlag(error: ErrorObject | undefined): boolean {
  const metadata = error?.metadata;
  return typeof metadata === "object" && metadata !== null && ("reasons" in metadata || "flagged_input" in metadata);
}

function compatibleKeyFault(status: number, error: ErrorObject | undefined): KeyVerdict | undefined {
  if (status === 402) return sure("quota");
  if (status === 403 && isModerationFlag(error)) return undefined;
  return openaiProvider.keyFaults.judge(status, error);
}

export const compatibleKeyFaults: KeyFaultRules = Object.freeze({ statuses: Object.freeze([401, 402, 403, 429]), judge: compatibleKeyFault });
