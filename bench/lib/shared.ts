// Constants the driver and its children agree on.

/** The gateway access token the load generator presents. */
export const benchToken = "sk-bench-0123456789";

/** Content chunks in a streamed answer (plus a role chunk, a stop chunk and [DONE]). */
export const streamChunks = 20;

/** SSE events a client receives for one streamed answer: role + content + stop + [DONE]. */
export const streamEvents = streamChunks + 3;

export const model = "gpt-4o-mini";
