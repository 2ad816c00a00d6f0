// The model list: the models the calling token can use — its group's models that have a
// channel, narrowed by its allowlist — in the list shape of the SDK that asks (OpenAI,
// Anthropic or Gemini); and one of them by name (GET /v1/models/{model}), in that SDK's
// shape for one model. A model the token cannot use is as unknown as one that is not.

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { Needs, Stage } from "../context.js";

const ownerOf = { openai: "openai", anthropic: "anthropic", gemini: "google" } as const;
/** Stable `created` stamp: the price list does not record when a model appeared. */
const createdAt = new Date();
const created = Math.floor(createdAt.getTime() / 1000);

interface Listed {
  readonly id: string;
  readonly owner: string;
}

function usableModels(ctx: Needs<"caller">): Listed[] {
  const token = ctx.caller;
  const listed: Listed[] = [];
  for (const [id, tiers] of ctx.runtime.candidates.get(token.group) ?? []) {
    if (token.allowModel && !token.allowModel(id)) continue;
    if (ctx.runtime.models.get(id)?.endpoint === "realtime") continue;
    listed.push({ id, owner: ownerOf[tiers[0]?.channels[0]?.protocol ?? "openai"] });
  }
  return listed;
}

const entries = {
  openai: (m: Listed) => ({ id: m.id, object: "model", created, owned_by: m.owner }),
  anthropic: (m: Listed) => ({ type: "model", id: m.id, display_name: m.id, created_at: createdAt.toISOString() }),
  gemini: (m: Listed) => ({
    name: `models/${m.id}`,
    displayName: m.id,
    supportedGenerationMethods: ["generateContent", "streamGenerateContent", "countTokens"],
  }),
};

const lists = {
  openai: (models: Listed[]) => ({ object: "list", data: models.map(entries.openai) }),
  anthropic: (models: Listed[]) => ({
    data: models.map(entries.anthropic),
    has_more: false,
    first_id: models[0]?.id ?? null,
    last_id: models.at(-1)?.id ?? null,
  }),
  // Google's ListModelsResponse; every model on one page, so no nextPageToken.
  gemini: (models: Listed[]) => ({ models: models.map(entries.gemini) }),
};

/** The models terminal: the list, or one model named in the path. */
export function modelsStage(): Stage<Needs<"target" | "caller">> {
  return async (ctx) => {
    const { protocol, pathModel } = ctx.target;
    const body = JSON.stringify(pathModel === undefined ? lists[protocol](usableModels(ctx)) : entries[protocol](oneModel(ctx, pathModel)));
    ctx.res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    ctx.res.end(body);
  };
}

/** The usable model named in the path. */
function oneModel(ctx: Needs<"caller">, name: string): Listed {
  const found = usableModels(ctx).find((m) => m.id === name);
  if (!found) throw new GatewayError(errors.modelNotFound, `The model '${name}' does not exist or this access token cannot use it.`);
  return found;
}
