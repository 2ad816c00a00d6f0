// The failover loop: tries a plan's channels in order until one answers, and returns what
// happened as one value (the answer, or why there is none, and every attempt). Within a
// channel, a key the provider refuses or says is out of credit is taken out of rotation and
// the request is tried again on the channel's next key; a channel whose keys are all out is
// passed over (one whose keys an operator took out, as if it had none: when no channel is
// left to try, the answer is channel_not_found). A fault the provider names only in its
// message is first confirmed by a probe of the gateway's own (routing/key-probes.ts), which
// this request waits for (bounded): confirmed, it is a fault like any; not, the answer is
// this request's own and goes to the client as it came.

import { Readable } from "node:stream";
import { errors } from "../errors/catalogue.js";
import { GatewayError } from "../errors/gateway-error.js";
import { log } from "../observability/log.js";
import {
  keyFailureTally, upstreamDuration, upstreamErrorClass, upstreamErrorTally, upstreamRetriesTotal,
} from "../observability/metrics.js";
import { keyFaultsOf } from "../providers/index.js";
import { CredentialFailure } from "../providers/kind.js";
import { judgeKeyFault, type KeyFault, type KeyVerdict } from "../providers/provider.js";
import type { Channel, Protocol } from "../runtime/types.js";
import { BrokenAnswer, readAll, type Exchange, type UpstreamRequest } from "./exchanges/exchange.js";
import { answered, prepared } from "./kind-wire.js";
import { exhaustedError, shouldFailOver, type LastFailure } from "./failover.js";
import { discard, send, UpstreamFailure, type Cancellation, type UpstreamResponse } from "./send.js";
import type { Served } from "./served.js";

/** What the loop needs of the request, as values. */
export interface AttemptPlan {
  /** The channels to try, in order (routing/plan.ts, a session's channel first). */
  readonly channels: readonly Channel[];
  /** The exchange that speaks a channel protocol for this request. */
  readonly exchangeFor: (protocol: Protocol) => Exchange;
  /** Cancels the call in flight when the client leaves (released once an answer is relayed). */
  readonly cancel: Cancellation;
  readonly routing: AttemptState;
  readonly requestId: string;
  /** The model as the client named it (each channel maps it to its own name). */
  readonly modelName: string;
  /** server.upstream_timeout and server.stream_idle_timeout. */
  readonly timeoutMs: number;
  readonly idleTimeoutMs: number;
  /** The client's response: once destroyed, no other channel or key is tried for it. */
  readonly client: { readonly destroyed: boolean };
}

/** A key out of rotation: why (manual: an operator took it out), and until when (epoch ms). */
export interface KeyOutMark {
  readonly reason: KeyFault | "manual";
  readonly until: number;
}

/**
 * The channel and key state the loop reads and records, as it needs it (routing/'s
 * RoutingState is the one the gateway passes): the channel's health, its key rotation, each
 * key's health and statistics, and the probe that confirms a fault named only in a message.
 * Declared here so that upstream/ does not depend on routing/, which sends through it.
 */
export interface AttemptState {
  readonly health: {
    recordFailure(channel: string): Promise<void>;
    recordSuccess(channel: string): Promise<void>;
  };
  readonly keys: { pick(channel: Channel, usable: (index: number) => boolean): number | undefined };
  readonly keyHealth: {
    view(channel: Channel): readonly (KeyOutMark | undefined)[] | Promise<readonly (KeyOutMark | undefined)[]>;
    fingerprints(channel: Channel): readonly string[];
    markOut(channel: Channel, index: number, reason: KeyFault): Promise<void>;
  };
  readonly keyStats: { record(channel: string, key: string, seconds: number, failed: boolean): void };
  readonly keyProbes: {
    confirm(suspect: {
      readonly channel: Channel; readonly index: number; readonly fingerprint: string; readonly upstreamModel: string; readonly fault: KeyFault;
    }): Promise<KeyFault | undefined>;
  };
}

/** One attempt: where it went and how it ended. */
export interface AttemptOutcome {
  readonly channel: string;
  readonly upstreamModel: string;
  /** The key's fingerprint (never the key). */
  readonly key: string;
  /** The upstream's status, or the transport failure's kind (timeout, aborted, …); "error"
   * when the exchange threw (the request cannot be sent, e.g. a refused conversion). */
  readonly result: string;
  /** A key fault the answer named (the key was taken out of rotation). */
  readonly fault: KeyFault | undefined;
}

/** Everything the loop did. */
export interface Attempts {
  /** The answer served; undefined when the client left first or nothing answered. */
  readonly answer: Served | undefined;
  /** Why there is no answer: the client-facing error once every attempt failed, or what an
   * attempt threw; undefined when answered or when the client left. */
  readonly error: GatewayError | unknown;
  readonly tried: readonly AttemptOutcome[];
  /** The last channel tried, and the model name sent to it (the usage entry names them). */
  readonly channel: Channel | undefined;
  readonly upstreamModel: string | undefined;
  /** The fingerprint of the key whose answer was served (never the key); undefined when
   * there is no answer. */
  readonly key: string | undefined;
}

/** The loop's state while it runs (one per request, never shared). */
class Run implements Attempts {
  answer: Served | undefined = undefined;
  error: unknown = undefined;
  readonly tried: AttemptOutcome[] = [];
  channel: Channel | undefined = undefined;
  upstreamModel: string | undefined = undefined;
  key: string | undefined = undefined;
  last: LastFailure | undefined = undefined;
  constructor(readonly plan: AttemptPlan) {}
}

/** What an attempt on a key leaves the loop to do: the next key of the same channel, the
 * next channel, or no more attempts (an answer, the client gone, a timeout). */
type Then = "next-key" | "next-channel" | "stop";

/** Tries the plan; the result says what answered, or why nothing did. */
export async function attemptAll(plan: AttemptPlan): Promise<Attempts> {
  const run = new Run(plan);
  try {
    for (const channel of plan.channels) {
      if (await tryChannel(run, channel) === "stop") return run;
    }
    run.error = run.last ? exhaustedError(run.last)
      : new GatewayError(errors.channelNotFound, `No available channel for model '${plan.modelName}': an operator took every key of its channels out of rotation.`);
  } catch (err) {
    run.error = err;
  }
  return run;
}

/** Tries one channel's keys in rotation until one answers or the channel is passed over. */
async function tryChannel(run: Run, channel: Channel): Promise<Then> {
  const { keys, keyHealth } = run.plan.routing;
  run.channel = channel;
  run.upstreamModel = channel.modelMap.get(run.plan.modelName) ?? run.plan.modelName;
  const viewed = keyHealth.view(channel);
  const outs = viewed instanceof Promise ? await noted(viewed, channel, noKeysOut) : viewed;
  const fingerprints = keyHealth.fingerprints(channel);
  const exchange = run.plan.exchangeFor(channel.protocol);
  /** Keys refused in this request (indexes), beside those out of rotation before it. */
  let refused: number[] | undefined;
  const now = Date.now();
  const usable = (i: number) => !((outs[i]?.until ?? 0) > now) && !refused?.includes(i);
  for (;;) {
    const index = keys.pick(channel, usable);
    if (index === undefined) {
      // Every key is out: the next channel. Its reason is the answer only if nothing else went
      // wrong; keys an operator took out have none (as a channel without keys).
      const manualOnly = !refused && channel.keys.every((_, i) => outs[i]?.reason === "manual");
      if (!manualOnly) run.last ??= { kind: "keys", reason: outs.some((o) => o?.reason === "quota") ? "quota" : "auth" };
      return "next-channel";
    }
    // A client that left is not served from another channel or key.
    if (run.plan.client.destroyed && run.tried.length > 0) return "stop";
    const then = await tryKey(run, channel, exchange, index, fingerprints[index]);
    if (then !== "next-key") return then;
    (refused ??= []).push(index);
  }
}

/** One attempt on one key of the channel. */
async function tryKey(run: Run, channel: Channel, exchange: Exchange, index: number, fingerprint: string): Promise<Then> {
  const { plan } = run;
  const { health, keyHealth, keyProbes } = plan.routing;
  const upstreamModel = run.upstreamModel ?? plan.modelName;
  const attempt = { channel: channel.name, upstreamModel, key: fingerprint, result: "error", fault: undefined as KeyFault | undefined };
  run.tried.push(attempt);
  const started = process.hrtime.bigint();
  let upstream: UpstreamResponse;
  let request: UpstreamRequest;
  try {
    const key = channel.keys[index];
    request = await prepared(channel, key, exchange.request(channel, upstreamModel, key));
    // Spelled out, not spread: on Node 20 every property added after an object spread
    // builds a new hidden class, ~200 B that only a full GC frees; here it was half of
    // what the gateway promoted per request (BENCH_HEAP_PROMOTED=1).
    upstream = await send({
      url: request.url, headers: request.headers, body: request.body, timeoutMs: plan.timeoutMs,
      idleTimeoutMs: plan.idleTimeoutMs, cancel: plan.cancel,
    });
  } catch (err) {
    if (err instanceof CredentialFailure) return credentialFailed(run, channel, index, err, started, fingerprint, attempt);
    if (!(err instanceof UpstreamFailure)) throw err;
    attempt.result = err.kind;
    return transportFailed(run, channel, err, started, fingerprint);
  }
  upstream = answered(channel, upstream, request);
  const judged = await keyFaultOf(channel, upstream);
  upstream = judged.upstream;
  const status = upstream.status;
  const fault = judged.verdict?.confirm
    ? await keyProbes.confirm({ channel, index, fingerprint, upstreamModel, fault: judged.verdict.fault })
    : judged.verdict?.fault;
  attempt.result = String(status);
  attempt.fault = fault;
  observeAttempt(channel, plan.modelName, started, attempt.result, run.plan.routing, fingerprint, fault);
  if (fault) {
    discard(upstream.body); // drained, so the connection returns to the pool
    run.last = { kind: "keys", reason: fault };
    await noted(keyHealth.markOut(channel, index, fault), channel);
    upstreamRetriesTotal.inc({ channel: channel.name, reason: `key_${fault}` });
    log.warn("upstream refused a channel key; trying the next", { requestId: plan.requestId, channel: channel.name, key: fingerprint, status, reason: fault });
    return "next-key";
  }
  if (shouldFailOver(status)) {
    discard(upstream.body);
    run.last = { kind: "status", status, retryAfter: header(upstream, "retry-after") };
    await noted(health.recordFailure(channel.name), channel);
    upstreamRetriesTotal.inc({ channel: channel.name, reason: String(status) });
    log.warn("upstream attempt failed", { requestId: plan.requestId, channel: channel.name, status });
    return "next-channel";
  }
  return relayAnswer(run, channel, exchange, upstream, fingerprint);
}

/** The kind could not make the request's credentials: a key at fault goes out of rotation
 * (the next key), a service it needs that did not answer fails the channel over. */
async function credentialFailed(
  run: Run, channel: Channel, index: number, err: CredentialFailure, started: bigint, fingerprint: string, attempt: { result: string; fault: KeyFault | undefined },
): Promise<Then> {
  const { plan } = run;
  if (err.fault === "unreachable") {
    attempt.result = "connect";
    return transportFailed(run, channel, new UpstreamFailure("connect", err.message), started, fingerprint);
  }
  attempt.result = "credentials";
  attempt.fault = "auth";
  observeAttempt(channel, plan.modelName, started, attempt.result, plan.routing, fingerprint, "auth");
  run.last = { kind: "keys", reason: "auth" };
  await noted(plan.routing.keyHealth.markOut(channel, index, "auth"), channel);
  upstreamRetriesTotal.inc({ channel: channel.name, reason: "key_auth" });
  log.warn("a channel key's credentials could not be made; trying the next", { requestId: plan.requestId, channel: channel.name, key: fingerprint, error: err.message });
  return "next-key";
}

/** A connection that failed: the next channel, but for a timeout (not retried: 504) or a
 * client that left. */
async function transportFailed(run: Run, channel: Channel, err: UpstreamFailure, started: bigint, fingerprint: string): Promise<Then> {
  const { plan } = run;
  observeAttempt(channel, plan.modelName, started, err.kind, plan.routing, fingerprint);
  if (err.kind === "aborted") return "stop";
  run.last = { kind: "transport", failure: err };
  if (err.kind === "timeout") {
    run.error = exhaustedError(run.last);
    return "stop";
  }
  await noted(plan.routing.health.recordFailure(channel.name), channel);
  upstreamRetriesTotal.inc({ channel: channel.name, reason: err.kind });
  log.warn("upstream attempt failed", { requestId: plan.requestId, channel: channel.name, reason: err.kind, detail: err.message });
  return "next-channel";
}

/** Hands the answer to the exchange; one broken before any of it reached the client (cut
 * short, stalled, not JSON) fails the channel, and the next may answer. */
async function relayAnswer(run: Run, channel: Channel, exchange: Exchange, upstream: UpstreamResponse, fingerprint: string): Promise<Then> {
  const { plan } = run;
  // The answer is the exchange's from here: a client leaving no longer cancels it.
  plan.cancel.release();
  const answer = await exchange.respond(upstream, channel);
  if (answer instanceof BrokenAnswer) {
    log.warn("upstream answer broken", { requestId: plan.requestId, channel: channel.name, reason: answer.reason });
    run.last = { kind: "broken", reason: answer.reason };
    upstreamErrorTally.add(1, channel.name, "broken_answer");
    keyFailureTally.add(1, channel.name, fingerprint, "broken_answer");
    await noted(plan.routing.health.recordFailure(channel.name), channel);
    upstreamRetriesTotal.inc({ channel: channel.name, reason: "broken_answer" });
    return "next-channel";
  }
  // Not waited for: the answer need not wait to forget a channel's past failures.
  void noted(plan.routing.health.recordSuccess(channel.name), channel);
  run.answer = answer;
  run.key = fingerprint;
  return "stop";
}

/** No key known out: what routing assumes when key health cannot be read. */
const noKeysOut: readonly (KeyOutMark | undefined)[] = [];

/** Health is advice: a store that cannot read or note it does not fail the request. */
function noted<T>(recorded: Promise<T>, channel: Channel, fallback?: T): Promise<T> {
  return recorded.catch((err) => {
    log.warn("channel health not recorded", { channel: channel.name, error: String(err) });
    return fallback as T;
  });
}

/**
 * What an answer says of the channel key, for a status the provider uses for a refused key
 * or an account out of credit (401/403, Gemini 400 API_KEY_INVALID, OpenAI 429
 * insufficient_quota, Anthropic 400 "credit balance is too low"): its error body is read
 * (bounded) and judged by the provider's rules (providers/). An answer of any other status
 * is not read; either way it goes on with its body intact.
 */
async function keyFaultOf(channel: Channel, upstream: UpstreamResponse): Promise<{ verdict?: KeyVerdict; upstream: UpstreamResponse }> {
  const rules = keyFaultsOf(channel);
  if (!rules.statuses.includes(upstream.status)) return { upstream };
  const body = await readAll(upstream.body, KEY_FAULT_BODY_LIMIT);
  const verdict = judgeKeyFault(rules, upstream.status, body.toString("utf8"));
  return { verdict, upstream: { status: upstream.status, headers: upstream.headers, body: Readable.from([body]) } };
}

/** The most of an error answer read to tell whether it names a key fault (errors are small). */
const KEY_FAULT_BODY_LIMIT = 256 * 1024;

function header(res: UpstreamResponse, name: string): string | undefined {
  const v = res.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Metrics and key statistics of one attempt. */
function observeAttempt(
  channel: Channel, modelName: string, started: bigint, outcome: string, routing: AttemptState, key: string, fault?: KeyFault,
): void {
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  upstreamDuration.observe(seconds, channel.name, modelName, outcome);
  // A key the provider refused or found out of credit is that, whatever its status says
  // (an OpenAI insufficient_quota is a 429, not a rate limit); a 401/403 the provider's
  // fields do not blame on the key (a header or a file of the request) is the client's.
  const errorClass = fault ?? (outcome === "401" || outcome === "403" ? "client" : upstreamErrorClass(outcome));
  if (errorClass !== undefined) upstreamErrorTally.add(1, channel.name, errorClass);
  if (outcome === "aborted") return; // the client left: nothing to say of the key
  if (errorClass !== undefined) keyFailureTally.add(1, channel.name, key, errorClass);
  routing.keyStats.record(channel.name, key, seconds, errorClass !== undefined);
}
