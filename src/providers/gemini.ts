// What a generate-content upstream needs from us: its key header (never the `key` query
// parameter, which would land in upstream access logs), and how it refuses a bad key:
// with 400 API_KEY_INVALID, not 401.

import type { ProviderSpec } from "./provider.js";

export const geminiProvider: ProviderSpec = Object.freeze({
  protocol: "gemini",
  paths: Object.freeze({ models: "/v1beta/models" }),
  authHeaders: (key: string) => ({ "x-goog-api-key": key }),
  privateResponseHeaders: Object.freeze([]),
  credentialRefusal: Object.freeze({ status: 400, test: (body: string) => body.includes("API_KEY_INVALID") }),
});
