// Fetches an asynchronous job (a video's status, or the video itself) from the channel that
// created it, for a caller the job-access stage let through. Polls are not billed, but a
// status answer saying the job failed refunds its submission's charge (relayed unchanged).

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { videoContentQuery, videoJobPath } from "../../protocols/openai/video-status.js";
import { kindOf } from "../../providers/index.js";
import { CredentialFailure } from "../../providers/kind.js";
import type { JobOutcomes } from "../../routing/job-outcomes.js";
import type { RoutingState } from "../../routing/routing-state.js";
import { downstreamResponseHeaders } from "../../upstream/headers.js";
import { forwardedQuery } from "../../upstream/query.js";
import { relay } from "../../upstream/relay.js";
import { cutOff, endingOf, served } from "../../upstream/served.js";
import { Cancellation, discard, send, UpstreamFailure } from "../../upstream/send.js";
import { credentialError, exhaustedError } from "../../upstream/failover.js";
import { answered, preparedGet } from "../../upstream/kind-wire.js";
import { keyInRotation, noteCredentialFailure } from "../../routing/key-pick.js";
import type { Served } from "../../upstream/served.js";
import { give, type Needs, type Stage } from "../context.js";

/** A status answer is a small JSON object; past this the copy read for billing is dropped. */
const STATUS_BODY_LIMIT = 64 * 1024;

/** The job terminal: relays the job's status or bytes from the channel holding it. */
export function jobStage(routing: RoutingState, outcomes: JobOutcomes): Stage<Needs<"target" | "job">> {
  return async (ctx) => {
    const owner = ctx.job; // the job-access phase let this caller fetch it
    const id = owner.id;
    const channel = ctx.runtime.channels.get(owner.channel);
    if (!channel || !channel.enabled) {
      throw new GatewayError(errors.affinityChannelUnavailable, "The channel that holds this video job is no longer available.");
    }
    let answer: Served | undefined;
    const provider = kindOf(channel);
    const content = ctx.target.pathAction === "content";
    const query = forwardedQuery(ctx.query, content ? videoContentQuery : undefined);
    const path = videoJobPath(id, content) + (query ? "?" + query : "");
    const cancel = new Cancellation();
    const onClose = () => { if (!ctx.res.writableFinished) cancel.cancel(); };
    ctx.res.once("close", onClose);
    let key: string | undefined;
    try {
      key = await keyInRotation(routing.keys, routing.keyHealth, channel);
      // The channel's kind makes the URL and credentials, as for the job's submission.
      const request = await preparedGet(channel, key, {
        path, upstreamModel: channel.modelMap.get(owner.model) ?? owner.model,
        headers: { accept: content ? "*/*" : "application/json", "accept-encoding": "identity" },
      });
      const upstream = answered(channel, await send({
        method: "GET", url: request.url, headers: request.headers, cancel, timeoutMs: ctx.runtime.server.upstreamTimeoutMs,
      }), request);
      if (upstream.status === 401 || upstream.status === 403 || upstream.status >= 500) {
        discard(upstream.body);
        throw exhaustedError({ kind: "status", status: upstream.status });
      }
      // Only a JSON status answer is read; the video's bytes pass untouched.
      const copy = !content && upstream.status === 200 && isJson(upstream.headers["content-type"]) ? new BoundedCopy(STATUS_BODY_LIMIT) : undefined;
      const relayed = await relay({
        res: ctx.res, body: upstream.body, transform: copy ? (chunk) => copy.add(chunk) : (chunk) => chunk,
        head: { status: upstream.status, headers: downstreamResponseHeaders(upstream.headers, provider.privateResponseHeaders, true), flush: false },
      });
      const parts = { status: upstream.status, ending: endingOf(relayed.end), charge: "none", firstByteNs: relayed.firstByteNs } as const;
      // A cut answer is cut for the client too; a whole one ends when settlement releases it.
      answer = relayed.end === "ended" ? served(ctx.res, parts) : cutOff(ctx.res, parts);
      // Acted on before the answer ends, so a client that reads its balance next sees it.
      const body = relayed.end === "ended" ? copy?.bytes() : undefined;
      if (body) await outcomes.observeAnswer(owner, body, "client");
    } catch (err) {
      if (err instanceof CredentialFailure && key !== undefined) {
        await noteCredentialFailure(routing.keyHealth, channel, key, err);
        throw credentialError(err);
      }
      if (err instanceof UpstreamFailure) {
        if (err.kind === "aborted") return;
        throw exhaustedError({ kind: "transport", failure: err });
      }
      throw err;
    } finally {
      ctx.res.off("close", onClose);
      give(ctx, "outcome", { served: answer, channel, upstreamModel: undefined, attempts: 0 });
    }
  };
}

function isJson(contentType: string | string[] | undefined): boolean {
  return typeof contentType === "string" && /^application\/(?:[\w.+-]*\+)?json\b/i.test(contentType);
}

/** Keeps a copy of the chunks passing through, up to a limit (then none at all). */
class BoundedCopy {
  readonly #limit: number;
  #chunks: Buffer[] | undefined = [];
  #size = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Copies a chunk and hands it back unchanged. */
  add(chunk: Buffer): Buffer {
    if (this.#chunks) {
      this.#size += chunk.length;
      if (this.#size > this.#limit) this.#chunks = undefined;
      else this.#chunks.push(chunk);
    }
    return chunk;
  }

  /** The whole body, or undefined when it passed the limit. */
  bytes(): Buffer | undefined {
    return this.#chunks && Buffer.concat(this.#chunks, this.#size);
  }
}
