// Which route each recorded client request takes to each channel protocol the replay test
// targets, and how it is replayed. Pure data: test/integration/client-fixtures.test.ts plays
// this plan and docs/clients.md (scripts/docs/client-matrix.ts) publishes it, so the two
// cannot disagree.

/** The four client protocols a recording can speak. */
export type ClientProtocol = "messages" | "chat" | "responses" | "generate";

/** The channel protocols a replay targets: an `openai` chat-completions channel, an
 * `anthropic` channel, a `gemini` channel, and an `openai` channel whose model is priced
 * `endpoint: responses` (the Responses API). */
export type Target = "openai" | "anthropic" | "gemini" | "responses";
export const TARGETS: readonly Target[] = ["openai", "anthropic", "gemini", "responses"];

/** The channel protocol a client protocol passes through to unconverted. */
export const NATIVE: Record<ClientProtocol, Target> = { messages: "anthropic", chat: "openai", responses: "responses", generate: "gemini" };

/** The protocol each target's upstream speaks. */
export const UPSTREAM: Record<Target, ClientProtocol> = { openai: "chat", anthropic: "messages", gemini: "generate", responses: "responses" };

export type Route = "pass-through" | "converted";

/** How a model request of protocol `proto` reaches a `target` channel. */
export const routeOf = (proto: ClientProtocol, target: Target): Route => (target === NATIVE[proto] ? "pass-through" : "converted");

/** How a token count (`/v1/messages/count_tokens`) is answered per target: only an
 * Anthropic channel can count; the others get the gateway's documented estimate. */
export const tokenCountRouteOf = (target: Target): "pass-through" | "local estimate" => (target === "anthropic" ? "pass-through" : "local estimate");

/** Clients recorded both streamed and as JSON; every other client's recordings are also
 * replayed the other way (a CLI records one way only). */
const RECORDED_BOTH_WAYS: ReadonlySet<string> = new Set(["ai-sdk", "agents-sdk"]);

/** Whether a client's recordings are replayed the other way too (streamed ↔ JSON). */
export const replayedFlipped = (client: string): boolean => !RECORDED_BOTH_WAYS.has(client);
