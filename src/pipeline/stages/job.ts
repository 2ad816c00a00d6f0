// Fetches an asynchronous job (a video's status, or the video itself) from the channel that
// created it, for the user whose token created it. Polls are not billed.

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { providers } from "../../providers/index.js";
import { upstreamUrl } from "../../providers/provider.js";
import { nextKey } from "../../routing/keys.js";
import { jobOwner } from "../../routing/jobs.js";
import { downstreamResponseHeaders } from "../../upstream/headers.js";
import { relay } from "../../upstream/relay.js";
import { Cancellation, send, UpstreamFailure } from "../../upstream/send.js";
import { exhaustedError } from "../../upstream/failover.js";
import type { Stage } from "../compose.js";
import type { RequestContext } from "../context.js";

export function jobStage(): Stage<RequestContext> {
  return async (ctx) => {
    const id = ctx.jobId!;
    const owner = jobOwner(id);
    // Another user's job is as unknown as a job that never was: ids do not leak.
    if (!owner || owner.user !== ctx.token!.user) {
      throw new GatewayError(errors.notFound, `No video job '${id}' was created through this gateway by this account (or it expired).`);
    }
    const channel = ctx.runtime.channels.get(owner.channel);
    if (!channel || !channel.enabled) {
      throw new GatewayError(errors.affinityChannelUnavailable, "The channel that holds this video job is no longer available.");
    }
    ctx.channel = channel;
    ctx.modelName = owner.model;
    const provider = providers[channel.protocol];
    const path = `/v1/videos/${encodeURIComponent(id)}${ctx.pathAction === "content" ? "/content" : ""}${ctx.query ? "?" + ctx.query : ""}`;
    const cancel = new Cancellation();
    const onClose = () => { if (!ctx.res.writableFinished) cancel.cancel(); };
    ctx.res.once("close", onClose);
    try {
      const upstream = await send({
        method: "GET", url: upstreamUrl(channel.baseUrl, path), cancel, timeoutMs: ctx.runtime.server.upstreamTimeoutMs,
        headers: { accept: String(ctx.req.headers.accept ?? "*/*"), "accept-encoding": "identity", ...provider.authHeaders(nextKey(channel)) },
      });
      if (upstream.status === 401 || upstream.status === 403 || upstream.status >= 500) {
        upstream.body.resume();
        throw exhaustedError({ kind: "status", status: upstream.status });
      }
      await relay({ ctx, body: upstream.body, status: upstream.status, flushHeaders: false,
        headers: downstreamResponseHeaders(upstream.headers, provider.privateResponseHeaders, true) });
    } catch (err) {
      if (err instanceof UpstreamFailure) {
        if (err.kind === "aborted") return;
        throw exhaustedError({ kind: "transport", failure: err });
      }
      throw err;
    } finally {
      ctx.res.off("close", onClose);
    }
  };
}
