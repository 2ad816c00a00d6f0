// Usage objects of every provider family as the providers send them (whole answers and
// events, shapes from the SDKs' type definitions): audio, realtime, cache writes by
// lifetime, service tiers, images, Gemini's modalities. Read and priced by
// test/unit/usage-components.test.ts and sent by the fake upstream of
// test/integration/usage-components.test.ts.

/** gpt-4o-audio-preview on chat-completions: audio in, audio out. */
export const chatAudio = {
  id: "chatcmpl-CAudio01", object: "chat.completion", created: 1764000000, model: "gpt-4o-audio-preview-2025-06-03",
  service_tier: "default", system_fingerprint: "fp_a1b2c3",
  choices: [{ index: 0, finish_reason: "stop", logprobs: null,
    message: { role: "assistant", content: null, refusal: null, annotations: [],
      audio: { id: "audio_01", data: "UklGRg==", expires_at: 1764003600, transcript: "Bonjour." } } }],
  usage: {
    prompt_tokens: 1200, completion_tokens: 800, total_tokens: 2000,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 1000 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 700, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  },
};

/** gpt-5 on the responses API, served at the flex tier: cache reads and reasoning. */
export const responsesFlex = {
  id: "resp_68c1flex", object: "response", created_at: 1764000000, status: "completed", model: "gpt-5-2025-08-07",
  service_tier: "flex", output: [{ type: "message", id: "msg_01", role: "assistant", status: "completed",
    content: [{ type: "output_text", text: "Done.", annotations: [] }] }],
  usage: {
    input_tokens: 10000, input_tokens_details: { cached_tokens: 8000 },
    output_tokens: 3000, output_tokens_details: { reasoning_tokens: 2000 }, total_tokens: 13000,
  },
};

/** gpt-realtime's response.done: text, audio and image input, some of each cached; text and
 * audio output. Uncached: 350 text, 600 audio, 50 image; cached: 300 text, 600 audio, 100 image. */
export const realtimeDone = {
  type: "response.done", event_id: "event_C1done",
  response: {
    object: "realtime.response", id: "resp_C1rt", status: "completed", output: [],
    usage: {
      total_tokens: 2500, input_tokens: 2000, output_tokens: 500,
      input_token_details: {
        text_tokens: 650, audio_tokens: 1200, image_tokens: 150, cached_tokens: 1000,
        cached_tokens_details: { text_tokens: 300, audio_tokens: 600, image_tokens: 100 },
      },
      output_token_details: { text_tokens: 100, audio_tokens: 400 },
    },
  },
};

/** gpt-4o-transcribe: audio in (and a text prompt), text out. */
export const transcription = {
  text: "Hello, world.",
  usage: { type: "tokens", input_tokens: 1400, input_token_details: { text_tokens: 200, audio_tokens: 1200 }, output_tokens: 300, total_tokens: 1700 },
};

/** gpt-4o-mini-tts's speech.audio.done (its SSE answer): text in, audio out. */
export const speechDone = { type: "speech.audio.done", usage: { input_tokens: 120, output_tokens: 2400, total_tokens: 2520 } };

/** gpt-image-1: text and image input, image output (no output details: all of it is image). */
export const imageAnswer = {
  created: 1764000000, background: "opaque", output_format: "png", quality: "high", size: "1024x1024",
  data: [{ b64_json: "iVBORw0KGgo=" }],
  usage: { input_tokens: 250, input_tokens_details: { text_tokens: 50, image_tokens: 200 }, output_tokens: 4160, total_tokens: 4410 },
};

/** An image answer whose output details split image and text output. */
export const imageAnswerDetailed = {
  ...imageAnswer,
  usage: { ...imageAnswer.usage, output_tokens_details: { image_tokens: 4000, text_tokens: 160 } },
};

/** Claude with 5-minute and 1-hour cache writes, thinking, web search, at the priority tier. */
export const anthropicAnswer = {
  id: "msg_01Cache1h", type: "message", role: "assistant", model: "claude-sonnet-4-5-20250929",
  content: [{ type: "text", text: "Here you go." }], stop_reason: "end_turn", stop_sequence: null,
  usage: {
    input_tokens: 1500, cache_creation_input_tokens: 30000, cache_read_input_tokens: 100000,
    cache_creation: { ephemeral_5m_input_tokens: 10000, ephemeral_1h_input_tokens: 20000 },
    output_tokens: 2000, output_tokens_details: { thinking_tokens: 500 },
    server_tool_use: { web_search_requests: 3, web_fetch_requests: 0 },
    service_tier: "priority", inference_geo: "us", speed: "standard",
  },
};

/** Gemini with audio and image input (some audio cached), a tool-use prompt, thoughts and
 * image output. promptTokenCount 5000 = 2000 text + 500 video + 1500 audio + 1000 image,
 * of which 2000 cached (1000 text, 1000 audio); candidates 1500 = 210 text + 1290 image. */
export const geminiAnswer = {
  candidates: [{ index: 0, finishReason: "STOP", content: { role: "model", parts: [{ text: "Here is the picture." }] } }],
  modelVersion: "gemini-2.5-flash-image",
  responseId: "gem_01",
  usageMetadata: {
    promptTokenCount: 5000, cachedContentTokenCount: 2000, candidatesTokenCount: 1500, thoughtsTokenCount: 700,
    toolUsePromptTokenCount: 400, totalTokenCount: 7600,
    promptTokensDetails: [
      { modality: "TEXT", tokenCount: 2000 }, { modality: "VIDEO", tokenCount: 500 },
      { modality: "AUDIO", tokenCount: 1500 }, { modality: "IMAGE", tokenCount: 1000 },
    ],
    cacheTokensDetails: [{ modality: "TEXT", tokenCount: 1000 }, { modality: "AUDIO", tokenCount: 1000 }],
    candidatesTokensDetails: [{ modality: "TEXT", tokenCount: 210 }, { modality: "IMAGE", tokenCount: 1290 }],
    toolUsePromptTokensDetails: [{ modality: "TEXT", tokenCount: 400 }],
  },
};

