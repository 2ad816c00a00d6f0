// How Azure OpenAI says the key is at fault. A 401 is a refused key (Azure writes
// {"error":{"code":"401",…}} for a wrong api-key, "PermissionDenied"/"Unauthorized" for a
// token): always the key's. A 403 is a key (or token) the resource will not take: key
// authentication disabled ("AuthenticationTypeDisabled"), a token without the role, or
// the resource's network rules: every request on the key would fail the same way. Azure's
// 429 is a rate limit of the deployment (code "429"; Azure has no out-of-credit answer at
// inference time: quota is capacity assigned to deployments), so the key stays in rotation,
// unless the answer carries OpenAI's structured `insufficient_quota` code.

import { sure, type ErrorObject, type KeyFaultRules, type KeyVerdict } from "../provider.js";

function azureKeyFault(status: number, error: ErrorObject | undefined): KeyVerdict | undefined {
  if (status === 429) return error?.code === "insufficient_quota" || error?.type === "insufficient_quota" ? sure("quota") : undefined;
  return sure("auth");
}

export const azureKeyFaults: KeyFaultRules = Object.freeze({ statuses: Object.freeze([401, 403, 429]), judge: azureKeyFault });
