// Which route each recorded client request takes to each channel protocol the replay test
// targets, and how it is replayed. Pure data: test/integration/client-fixtures.test.ts plays
// this plan and docs/clients.md (scripts/docs/client-matrix.ts) publishes it, so the two
// cannot disagree.

/** The four client protocols a recording can speak. */
export type ClientProtocol = "messages" | "chat" | "responses" | "generate";

/** The channels a replay targets. First-party: an `openai` chat-completions channel, an
 * `anthropic` channel, a `gemini` channel, and an `openai` channel whose model is priced
 * `endpoint: responses` (the Responses API). Provider kinds: Claude on Bedrock and on Vertex
 * AI, Gemini on Vertex AI, Azure OpenAI (chat completions on a deployment) and DeepSeek (an
 * openai-compatible preset). */
export type FirstPartyTarget = "openai" | "anthropic" | "gemini" | "responses";
export type KindTarget = "bedrock" | "vertex-claude" | "vertex-gemini" | "azure-openai" | "deepseek";
export type Target = FirstPartyTarget | KindTarget;
export const FIRST_PARTY_TARGETS: readonly FirstPartyTarget[] = ["openai", "anthropic", "gemini", "responses"];
export const KIND_TARGETS: readonly KindTarget[] = ["bedrock", "vertex-claude", "vertex-gemini", "azure-openai", "deepseek"];
export const TARGETS: readonly Target[] = [...FIRST_PARTY_TARGETS, ...KIND_TARGETS];

/** The protocol each target's channel speaks (a kind's channel speaks its wire in that
 * protocol's terms: Bedrock's and Vertex's Claude take Messages bodies). */
export const UPSTREAM: Record<Target, ClientProtocol> = {
  openai: "chat", anthropic: "messages", gemini: "generate", responses: "responses",
  bedrock: "messages", "vertex-claude": "messages", "vertex-gemini": "generate", "azure-openai": "chat", deepseek: "chat",
};

export type Route = "pass-through" | "converted";

/** How a model request of protocol `proto` reaches a `target` channel: unconverted when the
 * channel speaks the client's protocol. */
export const routeOf = (proto: ClientProtocol, target: Target): Route => (UPSTREAM[target] === proto ? "pass-through" : "converted");

/** How a token count (`/v1/messages/count_tokens`) is answered per target: an Anthropic
 * channel passes it through, Bedrock asks its CountTokens API and Vertex its count-tokens
 * model; the others get the gateway's documented estimate. */
export type TokenCountRoute = "pass-through" | "Bedrock CountTokens" | "Vertex count-tokens" | "local estimate";
export const tokenCountRouteOf = (target: Target): TokenCountRoute => {
  switch (target) {
    case "anthropic": return "pass-through";
    case "bedrock": return "Bedrock CountTokens";
    case "vertex-claude": return "Vertex count-tokens";
    default: return "local estimate";
  }
};

/** Clients recorded both streamed and as JSON; every other client's recordings are also
 * replayed the other way (a CLI records one way only). */
const RECORDED_BOTH_WAYS: ReadonlySet<string> = new Set(["ai-sdk", "agents-sdk"]);

/** Whether a client's recordings are replayed the other way too (streamed ↔ JSON). */
export const replayedFlipped = (client: string): boolean => !RECORDED_BOTH_WAYS.has(client);
