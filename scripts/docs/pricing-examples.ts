// The worked examples of docs/pricing.md: one per provider family, each a model with its
// provider's list price (as gateway.yaml writes it), a usage object as the provider answers
// it, and the canonical usage the gateway reads it as. The generator prices them with the
// gateway's own code; test/unit/docs-generated.test.ts holds their totals computed by hand.

import type { RawModel } from "../../src/config/raw.js";
import type { Units, Usage } from "../../src/protocols/usage.js";

/** One worked example. */
export interface WorkedExample {
  /** The heading: provider family, model and what it shows. */
  readonly title: string;
  readonly model: string;
  /** The model's entry in gateway.yaml (models.<model>); absent: an earlier example's. */
  readonly entry?: RawModel;
  /** Where the list price comes from. */
  readonly source: string;
  /** What the provider answered (its usage object, or the request when it reports none),
   * and a label that says which. */
  readonly wire: { readonly label: string; readonly json: unknown };
  /** How the gateway reads the answer into components, in words. */
  readonly reads: string;
  readonly usage: Usage;
  readonly units?: Units;
}

const usage = (u: Partial<Usage>): Usage => ({ input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0, ...u });

const OPENAI = "https://openai.com/api/pricing/";
const ANTHROPIC = "https://docs.claude.com/en/docs/about-claude/pricing";
const GEMINI = "https://ai.google.dev/gemini-api/docs/pricing";

/** The examples, in the order the page shows them. */
export const workedExamples: readonly WorkedExample[] = [
  {
    title: "OpenAI: gpt-5 with cached input, reasoning and service_tier flex",
    model: "gpt-5",
    entry: { endpoint: ["chat", "responses"], price: { input: 1.25, output: 10, cache_read_ratio: 0.1, service_tiers: { flex: 0.5, priority: 2 } } },
    source: `${OPENAI} (standard, flex and priority processing)`,
    wire: {
      label: "The responses API's answer (its `service_tier` and `usage`)",
      json: {
        service_tier: "flex",
        usage: { input_tokens: 12000, input_tokens_details: { cached_tokens: 8000 }, output_tokens: 2400, output_tokens_details: { reasoning_tokens: 1600 }, total_tokens: 14400 },
      },
    },
    reads: "`input_tokens` counts the cached tokens too: 12,000 − 8,000 cached = 4,000 `input`, 8,000 `cache_read`. `output_tokens` counts reasoning too: 2,400 − 1,600 = 800 `output`, 1,600 `reasoning` (at the output price: the list names no reasoning price). The answer says it was served at `flex`: × 0.5.",
    usage: usage({ input: 4000, cacheRead: 8000, output: 2400, reasoning: 1600, serviceTier: "flex" }),
  },
  {
    title: "OpenAI realtime: gpt-realtime with audio in and out, and cached audio",
    model: "gpt-realtime",
    entry: { endpoint: "realtime", price: { input: 4, output: 16, cache_read_ratio: 0.1, audio_input: 32, audio_cache_read: 0.4, audio_output: 64, image_input: 5 } },
    source: OPENAI,
    wire: {
      label: "A `response.done` event's `response.usage`",
      json: {
        total_tokens: 7700, input_tokens: 6200, output_tokens: 1500,
        input_token_details: {
          text_tokens: 1200, audio_tokens: 5000, image_tokens: 0, cached_tokens: 3000,
          cached_tokens_details: { text_tokens: 1000, audio_tokens: 2000, image_tokens: 0 },
        },
        output_token_details: { text_tokens: 300, audio_tokens: 1200 },
      },
    },
    reads: "Of 6,200 input tokens 3,000 are cached (1,000 text, 2,000 audio); the 3,200 uncached are 200 text `input` and 3,000 `audio_input`. Cached audio has a list price of its own (0.40, not 32 × 0.1), so the price names `audio_cache_read`. Output: 300 text `output`, 1,200 `audio_output`.",
    usage: usage({ input: 3200, audioInput: 3000, cacheRead: 3000, audioCacheRead: 2000, output: 1500, audioOutput: 1200 }),
  },
  {
    title: "Anthropic: Claude Sonnet 4.5 with 5-minute and 1-hour cache writes",
    model: "claude-sonnet-4-5",
    entry: {
      endpoint: "chat",
      price: {
        input: 3, output: 15, cache_read_ratio: 0.1, cache_write_ratio: 1.25, cache_write_1h_ratio: 2,
        tiers: [{ above_input_tokens: 200000, input: 6, output: 22.5 }],
      },
    },
    source: `${ANTHROPIC} (the tier: requests over 200K input tokens with the 1M-context beta)`,
    wire: {
      label: "A messages answer's `usage`",
      json: {
        input_tokens: 2000, cache_creation_input_tokens: 30000, cache_read_input_tokens: 50000,
        cache_creation: { ephemeral_5m_input_tokens: 10000, ephemeral_1h_input_tokens: 20000 },
        output_tokens: 1200, service_tier: "standard",
      },
    },
    reads: "`input_tokens` excludes the cache: 2,000 `input`, 50,000 `cache_read`; of 30,000 cache writes, 20,000 are 1-hour writes (`cache_write_1h`, × 2) and 10,000 5-minute writes (`cache_write`, × 1.25). The input is 82,000 tokens in all, below the 200K tier. `standard` is not a service tier the price lists, so nothing changes.",
    usage: usage({ input: 2000, cacheRead: 50000, cacheWrite: 30000, cacheWrite1h: 20000, output: 1200, serviceTier: "standard" }),
  },
  {
    title: "Anthropic: Claude Sonnet 4.5 above 200K input tokens",
    model: "claude-sonnet-4-5",
    source: ANTHROPIC,
    wire: {
      label: "A messages answer's `usage` (a request with the `context-1m-2025-08-07` beta)",
      json: { input_tokens: 180000, cache_creation_input_tokens: 0, cache_read_input_tokens: 40000, output_tokens: 3000 },
    },
    reads: "The input is 180,000 + 40,000 cached = 220,000 tokens, over the tier's 200,000: the whole request is billed at the tier (input 6, output 22.5, and cache reads at the tier's input × 0.1 = 0.6), not only the tokens past 200K.",
    usage: usage({ input: 180000, cacheRead: 40000, output: 3000 }),
  },
  {
    title: "Gemini: 2.5 Pro above 200K input tokens",
    model: "gemini-2.5-pro",
    entry: { endpoint: "chat", price: { input: 1.25, output: 10, cache_read_ratio: 0.1, tiers: [{ above_input_tokens: 200000, input: 2.5, output: 15 }] } },
    source: GEMINI,
    wire: {
      label: "A generateContent answer's `usageMetadata`",
      json: {
        promptTokenCount: 250000, cachedContentTokenCount: 100000, candidatesTokenCount: 2000, thoughtsTokenCount: 3000, totalTokenCount: 255000,
        promptTokensDetails: [{ modality: "TEXT", tokenCount: 250000 }],
      },
    },
    reads: "`promptTokenCount` counts the cached tokens too: 150,000 `input`, 100,000 `cache_read`; 250,000 in all is over 200K, so the tier prices the whole request. Thoughts are counted apart from `candidatesTokenCount`: 2,000 `output` and 3,000 `reasoning`, both at the tier's output price.",
    usage: usage({ input: 150000, cacheRead: 100000, output: 5000, reasoning: 3000 }),
  },
  {
    title: "Gemini: 2.5 Flash with audio input",
    model: "gemini-2.5-flash",
    entry: { endpoint: "chat", price: { input: 0.3, output: 2.5, cache_read_ratio: 0.1, audio_input: 1 } },
    source: GEMINI,
    wire: {
      label: "A generateContent answer's `usageMetadata`",
      json: {
        promptTokenCount: 12000, candidatesTokenCount: 800, thoughtsTokenCount: 500, totalTokenCount: 13300,
        promptTokensDetails: [{ modality: "AUDIO", tokenCount: 9600 }, { modality: "TEXT", tokenCount: 2400 }],
      },
    },
    reads: "`promptTokensDetails` by modality: 9,600 AUDIO tokens are `audio_input` (1.00, not the text 0.30), the 2,400 TEXT tokens `input`. 800 `output` and 500 `reasoning` (thoughts) at the output price.",
    usage: usage({ input: 12000, audioInput: 9600, output: 1300, reasoning: 500 }),
  },
  {
    title: "Images: gpt-image-1, priced by tokens",
    model: "gpt-image-1",
    entry: { endpoint: "image", price: { input: 5, cache_read_ratio: 0.25, image_input: 10, image_output: 40 } },
    source: OPENAI,
    wire: {
      label: "An images edit answer's `usage` (one high-quality 1024x1024 image)",
      json: { input_tokens: 244, input_tokens_details: { text_tokens: 50, image_tokens: 194 }, output_tokens: 4160, total_tokens: 4404 },
    },
    reads: "Of 244 input tokens, 194 are the input image (`image_input`), 50 the prompt (`input`); the 4,160 output tokens are the generated image (`image_output`).",
    usage: usage({ input: 244, imageInput: 194, output: 4160, imageOutput: 4160 }),
  },
  {
    title: "Images: dall-e-3, a price per image by size and quality",
    model: "dall-e-3",
    entry: {
      endpoint: "image",
      price: {
        per_image: 0.04,
        variants: [
          { when: { size: "1024x1024", quality: "hd" }, per_image: 0.08 },
          { when: { size: "1792x1024", quality: "hd" }, per_image: 0.12 },
          { when: { size: "1024x1792", quality: "hd" }, per_image: 0.12 },
          { when: { size: "1792x1024" }, per_image: 0.08 },
          { when: { size: "1024x1792" }, per_image: 0.08 },
        ],
      },
    },
    source: OPENAI,
    wire: {
      label: "The request (the answer reports no usage: one image in `data`)",
      json: { model: "dall-e-3", prompt: "a lighthouse at dusk", size: "1792x1024", quality: "hd", n: 1 },
    },
    reads: "The request asked `size: 1792x1024` and `quality: hd`: the first variant whose `when` it matches in full is the second (0.12), before the size-only one (0.08, what a standard-quality or unstated-quality request at that size pays). One image in the answer.",
    usage: usage({}),
    units: { images: 1, variant: { size: "1792x1024", quality: "hd" } },
  },
  {
    title: "Video: sora-2-pro, per second by size",
    model: "sora-2-pro",
    entry: { endpoint: "video", price: { per_second: 0.3, variants: [{ when: { size: "1792x1024" }, per_second: 0.5 }, { when: { size: "1024x1792" }, per_second: 0.5 }] } },
    source: OPENAI,
    wire: {
      label: "The finished video job",
      json: { id: "video_123", object: "video", model: "sora-2-pro", status: "completed", seconds: "8", size: "1792x1024" },
    },
    reads: "8 seconds at `size: 1792x1024` (0.50 a second, not the 720p 0.30); a breakdown counts seconds as milliseconds per 1k.",
    usage: usage({}),
    units: { milliseconds: 8000, variant: { size: "1792x1024" } },
  },
  {
    title: "Speech: gpt-4o-mini-tts, priced by tokens",
    model: "gpt-4o-mini-tts",
    entry: { endpoint: "speech", price: { input: 0.6, audio_output: 12 } },
    source: OPENAI,
    wire: {
      label: "The `speech.audio.done` event's `usage`",
      json: { input_tokens: 120, output_tokens: 1800, total_tokens: 1920 },
    },
    reads: "120 text `input` tokens; the 1,800 output tokens are the audio (`audio_output`).",
    usage: usage({ input: 120, output: 1800, audioOutput: 1800 }),
  },
  {
    title: "Speech: tts-1, per 1k characters",
    model: "tts-1",
    entry: { endpoint: "speech", price: { per_1k_chars: 0.015 } },
    source: OPENAI,
    wire: {
      label: "The request (the answer is audio and reports no usage)",
      json: { model: "tts-1", voice: "alloy", input: "(2,400 characters of text)" },
    },
    reads: "2,400 input characters at 0.015 per 1,000 (15 per 1M characters).",
    usage: usage({}),
    units: { characters: 2400 },
  },
  {
    title: "Transcription: gpt-4o-transcribe, priced by tokens",
    model: "gpt-4o-transcribe",
    entry: { endpoint: "transcription", price: { input: 2.5, output: 10, audio_input: 6 } },
    source: OPENAI,
    wire: {
      label: "The transcription answer's `usage`",
      json: { type: "tokens", input_tokens: 1500, input_token_details: { text_tokens: 100, audio_tokens: 1400 }, output_tokens: 600, total_tokens: 2100 },
    },
    reads: "1,400 `audio_input` tokens (the audio), 100 text `input` (the prompt), 600 `output` (the transcript).",
    usage: usage({ input: 1500, audioInput: 1400, output: 600 }),
  },
  {
    title: "Transcription: whisper-1, per second of audio",
    model: "whisper-1",
    entry: { endpoint: "transcription", price: { per_second: 0.0001 } },
    source: `${OPENAI} (0.006 a minute)`,
    wire: { label: "The transcription answer's `usage`", json: { type: "duration", seconds: 95 } },
    reads: "95 seconds of audio at 0.0001 a second.",
    usage: usage({}),
    units: { milliseconds: 95000 },
  },
];
