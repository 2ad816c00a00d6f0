// docs/conversion.md: which field each client protocol's requests keep, lose or are refused
// for toward every channel protocol, from the one table the converters obey
// (src/protocols/field-policy.ts), with the prose an operator needs around it.

import { fieldPolicyMarkdown } from "../../src/protocols/field-policy.js";

const INTRO = `# Which fields convert

Each field a client sends is, toward a channel of another protocol, **mapped** (it means
something there: \`top_k\` to Gemini's \`topK\`, a system message partway through the
conversation to the target's equivalent), **dropped** (it only steers the client's own
provider: \`context_management\`, \`cache_control\` toward non-Anthropic channels,
\`thinking.display\`, \`metadata\`, \`service_tier\`, \`safetySettings\`, top-k toward
chat-completions…), or **refused** with a \`400\` naming the field as sent (its loss would
change what the client gets: \`n\` above 1, logprobs, audio output, JSON without a schema
toward an Anthropic channel). A converted answer names what was dropped in the
\`x-gateway-dropped-fields\` response header (comma-separated, streamed or not) and in the
usage log (\`droppedFields\` in \`gateway logs --json\`); pass-through requests drop nothing. A
model that must never lose a field sets \`conversion: strict\`:

\`\`\`yaml
models:
  gpt-5:
    endpoint: chat
    conversion: strict   # default lenient: drop and report; strict: 400 naming the fields
\`\`\`

Cache hints a chat-completions client puts on messages or content parts (Anthropic's
\`cache_control\`, as OpenRouter takes it, or \`prompt_cache_breakpoint\`) become cache
breakpoints toward an Anthropic channel, on the block the client marked (a message's own on
its last block), \`ttl\` kept; the API takes four, so of more the last four are kept (each
covers the prompt up to it) and the drop is named. Cache reads and writes come back in
\`prompt_tokens_details\` (\`cached_tokens\`, \`cache_write_tokens\`) and are billed at the
model's cache ratios. An image an earlier answer carried (chat \`message.images\`, a messages
image block, a responses \`image_generation_call\`), sent back with the history, stays in the
model's turn toward Gemini (multi-turn image editing); the other APIs take images from the
user only, so there it is dropped and named.

A system (or developer) message partway through the conversation stays in place toward
chat-completions and responses channels; toward messages and generate-content channels,
which have no such role, it becomes a user-turn text \`<system>…</system>\` in place rather
than joining the system prompt, so the conversation keeps its order and the prompt's cached
prefix stays the same turn after turn.

A field the table does not know, at the top level or inside a message, content part or
tool (a client release adds one before anyone can record it), is **dropped and named** the
same way, by its path with array positions left out (\`messages[].content[].x_hint\`), as
LiteLLM's \`drop_params\` and OpenRouter would; \`conversion: strict\` refuses it instead. At
most 32 names are reported (the last then reads \`(more)\`).

Hosted tools (a tool the client's provider runs itself) follow one rule on every pair. Web
search exists at every provider and becomes the target's own: Anthropic's
\`web_search_20250305\`, Gemini's \`googleSearch\` (with server-side tool invocations turned
on beside function declarations), the responses API's \`web_search\`; toward a
chat-completions channel it is dropped, since only OpenAI's search models take
\`web_search_options\` and they take no tools. A search run by the target is billed from its
own report at the price list's \`tool_calls\`. Any other hosted tool (file search, image
generation, code interpreter or execution, computer use, MCP, URL context, web fetch…), and
Anthropic's client tools whose schema only Claude knows (\`bash_…\`, \`text_editor_…\`), is
dropped and named when merely offered; a \`tool_choice\` that forces one is a \`400\` naming it.

The table is
\`src/protocols/field-policy.ts\`; this page is generated from it (\`npm run docs\`) and a
test keeps the two equal. "—" is the same protocol: passed through untouched.

Legacy chat-completions function calling is tools by another name: \`functions\` become
function tools, \`function_call\` the tool choice, an assistant's \`function_call\` a tool call
and a \`role: "function"\` message its result. The legacy shape has no call ids, so the
gateway makes them from the call's position in the conversation (the same history gives the
same ids) and pairs each result with the latest unanswered call of its function's name. The
answer comes back in the legacy shape (\`message.function_call\`, \`delta.function_call\`,
\`finish_reason: "function_call"\`), one call at most, as that shape allows.
`;

/** The page: the introduction, then the table between markers. */
export function renderConversionReference(): string {
  return `${INTRO}\n<!-- field-policy:start -->\n${fieldPolicyMarkdown()}<!-- field-policy:end -->\n`;
}
