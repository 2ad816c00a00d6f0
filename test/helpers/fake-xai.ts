// A fake xAI API speaking its real wire format: chat completions at /v1/chat/completions
// and tokenize-text at /v1/tokenize-text, `Authorization: Bearer` keys. xAI's errors are
// not OpenAI's shape: `{"code": "<gRPC status text>", "error": "<message>"}`. A key it does
// not know is a 400 with the code it gives any bad argument ("Client specified an invalid
// argument") and the key masked in the message ("Incorrect API key provided: xa***12. …");
// a `reasoning_effort` it does not take is the same 400 quoting the client's value, so a
// client can make it say anything.

import type http from "node:http";
import { bearerKey, sendJson, startFakeServer, type BaseReceived, type FakeServer } from "./fake-server.js";

export interface FakeXaiOptions {
  /** The keys it accepts. */
  readonly keys: readonly string[];
}

export type FakeXai = FakeServer<BaseReceived>;

export const XAI_TEXT = "Hello from Grok.";
export const XAI_USAGE = Object.freeze({ prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 });
/** What xAI names the status of a bad argument (gRPC INVALID_ARGUMENT), key or request. */
export const INVALID_ARGUMENT = "Client specified an invalid argument";

/** xAI's masking of a key in its message: the first two and last two characters. */
export function maskedKey(key: string): string {
  return `${key.slice(0, 2)}***${key.slice(-2)}`;
}

/** A request the gateway sent to confirm a suspected key (its probe: tokenize-text), not a client's. */
export function isXaiProbe(r: BaseReceived): boolean {
  return r.path === "/v1/tokenize-text";
}

export function startFakeXai(opts: FakeXaiOptions): Promise<FakeXai> {
  return startFakeServer((r, res) => answer(r, res, opts));
}

function sendXaiError(res: http.ServerResponse, status: number, code: string, message: string): void {
  sendJson(res, status, { code, error: message });
}

function answer(r: BaseReceived, res: http.ServerResponse, opts: FakeXaiOptions): void {
  const auth = r.headers.authorization;
  if (auth === undefined) return sendXaiError(res, 401, "Unauthenticated", "No auth credentials found.");
  const key = bearerKey(r.headers);
  if (!opts.keys.includes(key)) {
    return sendXaiError(res, 400, INVALID_ARGUMENT, `Incorrect API key provided: ${maskedKey(key)}. You can obtain an API key from https://console.x.ai.`);
  }
  if (r.method === "POST" && r.path === "/v1/tokenize-text") {
    if (typeof r.body.text !== "string" || typeof r.body.model !== "string") return sendXaiError(res, 422, INVALID_ARGUMENT, "text and model are required");
    return sendJson(res, 200, { token_ids: [{ token_id: 13, string_token: r.body.text, token_bytes: [...Buffer.from(r.body.text)] }] });
  }
  if (r.method !== "POST" || r.path !== "/v1/chat/completions") return sendXaiError(res, 404, "Some requested entity was not found", "Not found");
  const effort = r.body.reasoning_effort;
  if (effort !== undefined && effort !== "low" && effort !== "high") {
    return sendXaiError(res, 400, INVALID_ARGUMENT, `Invalid reasoning_effort ${JSON.stringify(effort)}: expected "low" or "high"`);
  }
  sendJson(res, 200, {
    id: "chatcmpl-xai-1", object: "chat.completion", created: 1_764_000_000, model: r.body.model,
    choices: [{ index: 0, message: { role: "assistant", content: XAI_TEXT, refusal: null }, finish_reason: "stop" }],
    usage: XAI_USAGE, system_fingerprint: "fp_xai",
  });
}
