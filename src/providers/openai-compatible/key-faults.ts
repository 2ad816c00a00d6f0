// How OpenAI-compatible vendors say the key is at fault: OpenAI's rules (401/403 but for
// the codes that blame a request header; 429 insufficient_quota), plus 402 Payment Required
// (DeepSeek's "Insufficient Balance", OpenRouter's out of credits): the account is out of
// credit. OpenRouter answers 403 when a moderated model flags the *input* (its error then
// carries `metadata.reasons` / `flagged_input`): the client's request, not the key, so a
// client can never take a key out with flagged text. Judged by structure, never message text,
// but for xAI's invalid key, which only a message states: a suspicion its probe confirms.

import { openaiProvider } from "../openai/manifest.js";
import { sure, type ErrorObject, type KeyFaultRules, type KeyProbe, type KeyVerdict } from "../provider.js";

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

/** xAI's message for a key it does not know ("Incorrect API key provided: xa***12. You can
 * obtain an API key from https://console.x.ai."), sometimes URL-encoded. */
const XAI_INCORRECT_KEY = /incorrect(?:\s|%20)+api(?:\s|%20)+key/i;

/** xAI refuses an unknown key with 400 and the generic code it gives any bad argument
 * ({"code": "Client specified an invalid argument", "error": "<message>"}), so only the
 * message tells, and a message may echo the client's request: a suspicion for the probe. */
function xaiKeyFault(status: number, error: ErrorObject | undefined): KeyVerdict | undefined {
  if (status !== 400) return compatibleKeyFault(status, error);
  return typeof error?.message === "string" && XAI_INCORRECT_KEY.test(error.message) ? { fault: "auth", confirm: true } : undefined;
}

/** The probe: xAI's tokenize-text, free, with a body of ours (every endpoint checks the key
 * the same way); a healthy key answers 200 and stays. */
const xaiProbe: KeyProbe = Object.freeze({
  request: (upstreamModel: string) => ({ path: "/v1/tokenize-text", headers: {}, body: JSON.stringify({ text: ".", model: upstreamModel }) }),
});

export const xaiKeyFaults: KeyFaultRules = Object.freeze({
  statuses: Object.freeze([400, 401, 402, 403, 429]), judge: xaiKeyFault, probe: xaiProbe,
});
