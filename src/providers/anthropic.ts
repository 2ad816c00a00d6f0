// What a messages-protocol upstream needs from us: its path, its key header, the
// protocol version it requires, and how it says the key's account cannot be used: 400
// invalid_request_error "Your credit balance is too low to access the Anthropic API…"
// (out of credit) or "This organization has been disabled." (refused), neither a 401.

import { errorObjectOf, type KeyFault, type ProviderSpec } from "./provider.js";

/** The version sent when the client did not choose one (conversions from other protocols). */
export const DEFAULT_ANTHROPIC_VERSION = "2023-06-01";

function anthropicKeyFault(_status: number, body: string): KeyFault | undefined {
  const error = errorObjectOf(body);
  if (error?.type !== "invalid_request_error" || typeof error.message !== "string") return undefined;
  if (/credit balance is too low/i.test(error.message)) return "quota";
  if (/organization has been disabled/i.test(error.message)) return "auth";
  return undefined;
}

export const anthropicProvider: ProviderSpec = Object.freeze({
  protocol: "anthropic",
  paths: Object.freeze({ messages: "/v1/messages" }),
  authHeaders: (key: string) => ({ "x-api-key": key }),
  privateResponseHeaders: Object.freeze(["anthropic-organization-id"]),
  keyFaultBodies: Object.freeze({ statuses: Object.freeze([400]), classify: anthropicKeyFault }),
});
