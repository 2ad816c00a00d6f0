// Which API a model serves, guessed from its name: new-api keeps no such field (it routes
// by the request path), while gateway.yaml opens a model to one kind of endpoint (chat
// unless said otherwise). Only the well-known families are guessed; the plan notes each
// guess so the operator can correct it.

type Endpoint = "embeddings" | "image" | "speech" | "transcription" | "rerank" | "moderation";

const guesses: readonly (readonly [RegExp, Endpoint])[] = [
  [/embedding|^bge-|^m3e-/i, "embeddings"],
  [/^(dall-e|gpt-image|flux|stable-diffusion|sd-|imagen)/i, "image"],
  [/^(tts-|gpt-4o-mini-tts)/i, "speech"],
  [/^whisper|transcribe/i, "transcription"],
  [/rerank/i, "rerank"],
  [/moderation/i, "moderation"],
];

/** The endpoint `model` most likely serves when it is not chat; undefined for chat. */
export function guessEndpoint(model: string): Endpoint | undefined {
  return guesses.find(([pattern]) => pattern.test(model))?.[1];
}
