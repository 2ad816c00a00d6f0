// Constants the driver and its children agree on.

/** The gateway access token the load generator presents. */
export const benchToken = "sk-bench-0123456789";

/** Content chunks in a streamed answer (plus a role chunk, a stop chunk and [DONE]). */
export const streamChunks = 20;

/** SSE events a client receives for one streamed answer: role + content + stop + [DONE]. */
export const streamEvents = streamChunks + 3;

/** The text every fake upstream streams, `streamChunks` pieces of 6 characters. */
export const streamText = "The quick brown fox jumps over the lazy dog, again and again. ".repeat(2).slice(0, streamChunks * 6);

/** The pass-through model: an `openai` channel in front of the fake OpenAI upstream. */
export const model = "gpt-4o-mini";

/** The converted model: an `anthropic` channel in front of the fake Anthropic upstream,
 * asked for in chat-completions, so the gateway converts request, stream and usage. */
export const convertModel = "claude-sonnet-4-5";
