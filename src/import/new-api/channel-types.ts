// new-api's channel types (its constant/channel.go numbers) and which of them the gateway
// can serve: the OpenAI-compatible vendors as `openai`, Anthropic and Gemini as
// themselves. Everything else (Azure, AWS, Vertex, Baidu, Midjourney, …) is reported as
// skipped with its type name.

/** What a supported type becomes: our protocol, and new-api's base URL when the channel
 * left it empty. */
export interface ChannelTypeTarget {
  readonly protocol: "openai" | "anthropic" | "gemini";
  readonly defaultBaseUrl?: string;
}

/** Types served through our three wire protocols, with new-api's default base URLs. Only
 * vendors whose OpenAI-compatible API sits under <base>/v1 are here (so Perplexity and
 * VolcEngine, whose paths differ, are not). */
const supported: ReadonlyMap<number, ChannelTypeTarget> = new Map([
  [1, { protocol: "openai", defaultBaseUrl: "https://api.openai.com" }],
  [4, { protocol: "openai", defaultBaseUrl: "http://localhost:11434" }],
  [5, { protocol: "openai", defaultBaseUrl: "https://api.openai-sb.com" }],
  [6, { protocol: "openai", defaultBaseUrl: "https://api.openaimax.com" }],
  [7, { protocol: "openai", defaultBaseUrl: "https://api.ohmygpt.com" }],
  [8, { protocol: "openai" }],
  [9, { protocol: "openai", defaultBaseUrl: "https://api.caipacity.com" }],
  [10, { protocol: "openai", defaultBaseUrl: "https://api.aiproxy.io" }],
  [12, { protocol: "openai", defaultBaseUrl: "https://api.api2gpt.com" }],
  [13, { protocol: "openai", defaultBaseUrl: "https://api.aigc2d.com" }],
  [14, { protocol: "anthropic", defaultBaseUrl: "https://api.anthropic.com" }],
  [20, { protocol: "openai", defaultBaseUrl: "https://openrouter.ai/api" }],
  [24, { protocol: "gemini", defaultBaseUrl: "https://generativelanguage.googleapis.com" }],
  [25, { protocol: "openai", defaultBaseUrl: "https://api.moonshot.cn" }],
  [31, { protocol: "openai", defaultBaseUrl: "https://api.lingyiwanwu.com" }],
  [40, { protocol: "openai", defaultBaseUrl: "https://api.siliconflow.cn" }],
  [42, { protocol: "openai", defaultBaseUrl: "https://api.mistral.ai" }],
  [43, { protocol: "openai", defaultBaseUrl: "https://api.deepseek.com" }],
  [48, { protocol: "openai", defaultBaseUrl: "https://api.x.ai" }],
]);

/** new-api's names of its channel types, for what is skipped. */
const names: Readonly<Record<number, string>> = {
  0: "Unknown", 1: "OpenAI", 2: "Midjourney", 3: "Azure", 4: "Ollama", 5: "MidjourneyPlus", 6: "OpenAIMax", 7: "OhMyGPT",
  8: "Custom", 9: "AILS", 10: "AIProxy", 11: "PaLM", 12: "API2GPT", 13: "AIGC2D", 14: "Anthropic", 15: "Baidu", 16: "Zhipu",
  17: "Ali", 18: "Xunfei", 19: "360", 20: "OpenRouter", 21: "AIProxyLibrary", 22: "FastGPT", 23: "Tencent", 24: "Gemini",
  25: "Moonshot", 26: "ZhipuV4", 27: "Perplexity", 31: "LingYiWanWu", 33: "AWS", 34: "Cohere", 35: "MiniMax", 36: "SunoAPI",
  37: "Dify", 38: "Jina", 39: "Cloudflare", 40: "SiliconFlow", 41: "VertexAI", 42: "Mistral", 43: "DeepSeek", 44: "MokaAI",
  45: "VolcEngine", 46: "BaiduV2", 47: "Xinference", 48: "xAI", 49: "Coze", 50: "Kling", 51: "Jimeng", 52: "Vidu",
  53: "Submodel", 54: "DoubaoVideo", 55: "Sora", 56: "Replicate", 57: "Codex",
};

/** new-api's name of a channel type ("type 99" when unknown to us). */
export function channelTypeName(type: number): string {
  return names[type] ?? `type ${type}`;
}

/** Our protocol for a new-api channel type, or undefined when the gateway cannot serve it. */
export function channelTypeTarget(type: number): ChannelTypeTarget | undefined {
  return supported.get(type);
}
