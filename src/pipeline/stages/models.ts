// GET /v1/models: the models the calling token can use — its group's models that have a
// channel, narrowed by its allowlist — in the OpenAI list shape.

import type { Stage } from "../compose.js";
import type { RequestContext } from "../context.js";

const ownerOf = { openai: "openai", anthropic: "anthropic", gemini: "google" } as const;
/** Stable `created` stamp: the price list does not record when a model appeared. */
const created = Math.floor(Date.now() / 1000);

export function modelsStage(): Stage<RequestContext> {
  return async (ctx) => {
    const token = ctx.token!;
    const byModel = ctx.runtime.candidates.get(token.group);
    const data: object[] = [];
    for (const [id, tiers] of byModel ?? []) {
      if (token.allowModel && !token.allowModel(id)) continue;
      const protocol = tiers[0]?.channels[0]?.protocol ?? "openai";
      data.push({ id, object: "model", created, owned_by: ownerOf[protocol] });
    }
    const body = JSON.stringify({ object: "list", data });
    ctx.res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    ctx.res.end(body);
  };
}
