// Which Bedrock API a model id takes. Claude goes through InvokeModel with an Anthropic
// body (every Messages feature, betas included); every other model (Nova, Llama, Mistral,
// Cohere, DeepSeek, …) has its own InvokeModel body, so it goes through Converse, the
// API that takes one shape for all of them.

/** True when `modelId` (after model_map) names an Anthropic model: "anthropic" or "claude"
 * in the id (`anthropic.claude-…`, a cross-region profile `us.anthropic.…`, a name a test
 * front or proxy gives Claude) or in an ARN's resource (foundation model, inference
 * profile). No other vendor's Bedrock id holds either word. An ARN whose resource is a
 * random id (an application inference profile, a provisioned model) cannot be told: it
 * takes Converse, which serves Claude too, where an Anthropic body sent to another model
 * would be refused. */
export function isAnthropicModel(modelId: string): boolean {
  const resource = modelId.startsWith("arn:") ? modelId.slice(modelId.indexOf("/") + 1) : modelId;
  return /anthropic|claude/i.test(resource);
}
