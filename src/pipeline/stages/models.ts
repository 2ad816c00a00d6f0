// The model list: the models the calling token can use — its group's models that have a
// channel, narrowed by its allowlist — in the list shape of the SDK that asks (OpenAI,
// Anthropic or Gemini).

import type { RequestContext } from "../context.js";
import type { Stage } from "../compose.js";

const ownerOf = { openai: "openai", anthropic: "anthropic", gemini: "google" } as const;
/** Stable `created` stamp: the price list does not record when a model appeared. */
const createdAt = new Date();
const created = Math.floor(createdAt.getTime() / 1000);

interface Listed {
  readonly id: string;
  readonly owner: string;
}

function usableModels(ctx: RequestContext): Listed[] {
  const token = ctx.token!;
  const listed: Listed[] = [];
  for (const [id, tiers] of ctx.runtime.candidates.get(token.group) ?? []) {
    if (token.allowModel && !token.allowModel(id)) continue;
    if (ctx.runtime.models.get(id)?.endpoint === "realtime") continue;
    listed.push({ id, owner: ownerOf[tiers[0]?.channels[0]?.protocol ?? "openai"] });
  }
  return listed;
}

const shapes = {
  openai: (models: Listed[]) => ({
    object: "list",
    data: models.map((m) => ({ id: m.id, object: "model", created, owned_by: m.owner })),
  }),
  anthropic: (models: Listed[]) => ({
    data: models.map((m) => ({ type: "model", id: m.id, display_name: m.id, created_at: createdAt.toISOString() })),
    has_more: false,
    first_id: models[0]?.id ?? null,
    last_id: models.at(-1)?.id ?? null,
  }),
  gemini: (models: Listed[]) => ({
    models: models.map((m) => ({
      name: `models/${m.id}`,
      displayName: m.id,
      supportedGenerationMethods: ["generateContent", "streamGenerateContent", "countTokens"],
    })),
  }),
};

export function modelsStage(): Stage<RequestContext> {
  return async (ctx) => {
    const body = JSON.stringify(shapes[ctx.family](usableModels(ctx)));
    ctx.res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    ctx.res.end(body);
  };
}
