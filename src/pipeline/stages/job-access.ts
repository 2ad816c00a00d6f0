// Who may fetch an asynchronous job (a video's status or bytes): only the user whose token
// created it (another user's job is as unknown as one that never was), and only with a
// token that could ask for it anew: its model allowlist names the job's model and its group
// reaches the job's channel (403 otherwise; the IP allowlist is the access stage's). A
// fetch reaches the upstream, so it takes the token's and the model's rate windows as a
// new request would, handed over by the limits stage; it is not billed.

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { RoutingState } from "../../routing/routing-state.js";
import type { Model } from "../../runtime/types.js";
import type { Limiter } from "../../state/interfaces.js";
import type { Stage } from "../compose.js";
import type { RequestContext } from "../context.js";
import { modelWindow, takeWindows, type PendingLimits } from "../rate-windows.js";
import { stateFailure } from "../state-failure.js";

export function jobAccessStage(routing: RoutingState, limiter: Limiter): Stage<RequestContext> {
  return async (ctx, next) => {
    const id = ctx.jobId!;
    const token = ctx.token!;
    const owner = await routing.jobs.owner(id).catch((err: unknown) => {
      throw stateFailure(err, "job records");
    });
    if (!owner || owner.user !== token.user) {
      throw new GatewayError(errors.notFound, `No video job '${id}' was created through this gateway by this account (or it expired).`);
    }
    if (token.allowModel && !token.allowModel(owner.model)) {
      throw new GatewayError(errors.modelNotAllowed, `This access token has no access to the model '${owner.model}' of this job.`);
    }
    const channel = ctx.runtime.channels.get(owner.channel);
    if (channel && !channel.groups.has(token.group)) {
      throw new GatewayError(errors.groupNotAllowed, `This access token's group '${token.group}' has no access to the route that holds this job.`);
    }
    ctx.job = owner;
    ctx.modelName = owner.model;
    if (ctx.limits) await takeJobWindows(limiter, ctx.limits, ctx.runtime.models.get(owner.model), ctx.id);
    return next();
  };
}

/** Takes the token's windows and the model's, in order; a full one gives back the hits
 * before it and answers 429. The limits stage refunds or counts them once the fetch ends. */
async function takeJobWindows(limiter: Limiter, limits: PendingLimits, model: Model | undefined, requestId: string): Promise<void> {
  const ofModel = model && modelWindow(model);
  if (ofModel) limits.windows = [...limits.windows, ofModel];
  try {
    limits.hits = await takeWindows(limiter, limits.windows, requestId);
  } catch (err) {
    limits.outcome = "refused"; // not counted anywhere, as a refused request is not
    throw err instanceof GatewayError ? err : stateFailure(err, "rate limits");
  }
  limits.outcome = "admitted";
}
