// The browser form of an access token: browsers cannot set headers on a WebSocket, so the
// token rides as a subprotocol (auth reads it; realtime never offers it upstream).

/** The subprotocol prefix a token follows (realtime); never sent upstream. */
export const KEY_PROTOCOL = "openai-insecure-api-key.";
