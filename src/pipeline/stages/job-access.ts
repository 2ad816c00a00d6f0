// Who may fetch an asynchronous job (a video's status or bytes): only the user whose token
// created it (another user's job is as unknown as one that never was), and only with a
// token that could ask for it anew: its model allowlist names the job's model and its group
// reaches the job's channel (403 otherwise; the IP allowlist is the access phase's). A
// fetch reaches the upstream, so the admit phase then takes the token's and the model's
// rate windows as a new request would; it is not billed.

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { RoutingState } from "../../routing/routing-state.js";
import { give, type Has, type Needs, type Stage } from "../context.js";
import { stateFailure } from "../state-failure.js";

type In = Needs<"target" | "caller">;

/** The job-access phase: the fetched job, once its caller may fetch it. */
export function jobAccessStage(routing: RoutingState): Stage<In, Has<"job">> {
  return async (ctx, next) => {
    const id = ctx.target.jobId ?? "";
    const token = ctx.caller;
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
    return next(give(ctx, "job", owner));
  };
}
