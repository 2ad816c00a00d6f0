// One test request of `gateway channels test`, or of the periodic probe of keys out of
// rotation (routing/key-recovery.ts), on one key of a channel: sent straight to
// the upstream (no gateway, no usage entry, nobody charged), timed to the first byte of the
// answer's body and to its end, and judged: a 2xx whose body is a complete answer (JSON, or
// an event stream with no error event in it) passes; anything else fails with a class
// (the key faults as key health tells them, then the status's kind, or why no answer came)
// and the provider's message, with the key itself blanked out of it.

import type { Readable } from "node:stream";
import type { Dispatcher } from "undici";
import { keyFaultsOf } from "../providers/index.js";
import { CredentialFailure } from "../providers/kind.js";
import { errorObjectOf, judgeKeyFault, type KeyFault } from "../providers/provider.js";
import type { Channel } from "../runtime/types.js";
import { probeRequest } from "./channel-probe-request.js";
import { answered, preparedProbe } from "./kind-wire.js";

export type ProbeMode = "plain" | "stream";

/** Why a test failed: a key fault (auth, quota) as key health classifies it; else the
 * answer's kind (denied: a 401/403 that does not blame the key, rate_limit, request: another
 * 4xx, upstream: a 5xx, bad_answer: a 2xx that is not a complete answer); else no answer. */
export type ProbeErrorClass = KeyFault | "denied" | "rate_limit" | "request" | "upstream" | "bad_answer" | "timeout" | "connect" | "network";

export interface ProbeResult {
  readonly ok: boolean;
  /** The HTTP status; absent when no answer came. */
  readonly status?: number;
  /** From sending to the first byte of the answer's body (to its head when it has none). */
  readonly firstByteMs?: number;
  readonly totalMs: number;
  readonly errorClass?: ProbeErrorClass;
  /** The provider's error message (or what went wrong), at most MESSAGE_LIMIT characters. */
  readonly message?: string;
}

export interface ProbeTarget {
  readonly channel: Channel;
  readonly key: string;
  readonly upstreamModel: string;
  readonly mode: ProbeMode;
  /** Ends the test early (the gateway stopping); it then fails as a timeout. */
  readonly signal?: AbortSignal;
}

/** The most of an answer kept to judge it (an error body is small, an 8-token answer too). */
const BODY_LIMIT = 256 * 1024;
/** The longest message shown. */
export const MESSAGE_LIMIT = 160;

const connectCodes = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "UND_ERR_CONNECT_TIMEOUT"]);
const timeoutCodes = new Set(["UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);

/** Sends the test request through `dispatcher`; the whole exchange is bounded by `timeoutMs`. */
export async function probeKey(target: ProbeTarget, dispatcher: Dispatcher, timeoutMs: number): Promise<ProbeResult> {
  const { channel, key, upstreamModel, mode } = target;
  const request = probeRequest(channel.protocol, upstreamModel, mode === "stream");
  const body = Buffer.from(request.body);
  const timeout = AbortSignal.timeout(timeoutMs);
  const deadline = target.signal ? AbortSignal.any([timeout, target.signal]) : timeout;
  const started = performance.now();
  const since = () => Math.round(performance.now() - started);
  let status: number | undefined;
  let firstByteMs: number | undefined;
  try {
    // As an attempt goes: the first-party request, made the channel kind's own.
    const wire = await preparedProbe(channel, key, { path: request.path, headers: request.headers, body, upstreamModel, stream: mode === "stream" });
    const sent = await dispatcher.request({
      origin: wire.url.origin, path: wire.url.pathname + wire.url.search, method: "POST", body: wire.body, signal: deadline,
      headersTimeout: timeoutMs, bodyTimeout: timeoutMs, headers: wire.headers,
    });
    const answer = answered(channel, { status: sent.statusCode, headers: sent.headers, body: sent.body as unknown as Readable }, wire);
    status = answer.status;
    const headMs = since();
    const chunks: Buffer[] = [];
    let kept = 0;
    for await (const chunk of answer.body as AsyncIterable<Buffer>) {
      firstByteMs ??= since();
      if (kept < BODY_LIMIT) chunks.push(chunk);
      kept += chunk.length;
    }
    firstByteMs ??= headMs;
    const text = Buffer.concat(chunks).toString("utf8");
    const contentType = String(answer.headers["content-type"] ?? "");
    const failure = status >= 300 ? errorAnswer(channel, status, text) : badAnswer(mode, contentType, text);
    const totalMs = since();
    return failure
      ? { ok: false, status, firstByteMs, totalMs, errorClass: failure.errorClass, message: shown(failure.message, key) }
      : { ok: true, status, firstByteMs, totalMs };
  } catch (error) {
    if (error instanceof CredentialFailure) {
      return { ok: false, status, firstByteMs, totalMs: since(), errorClass: error.fault === "auth" ? "auth" : "connect", message: shown(error.message, key) };
    }
    const code = (error as NodeJS.ErrnoException).code ?? "";
    const errorClass: ProbeErrorClass = deadline.aborted || timeoutCodes.has(code) ? "timeout" : connectCodes.has(code) ? "connect" : "network";
    const message = errorClass === "timeout" ? `no complete answer within ${timeoutMs} ms` : code || (error as Error).message;
    return { ok: false, status, firstByteMs, totalMs: since(), errorClass, message: shown(message, key) };
  }
}

/** A non-2xx answer's class and message. */
function errorAnswer(channel: Channel, status: number, text: string): { errorClass: ProbeErrorClass; message: string } {
  // Our own body: a fault the provider states only in text is its word here, as for a probe.
  const fault = judgeKeyFault(keyFaultsOf(channel), status, text)?.fault;
  const errorClass: ProbeErrorClass = fault
    ?? (status === 401 || status === 403 ? "denied" : status === 429 ? "rate_limit" : status < 500 ? "request" : "upstream");
  return { errorClass, message: errorMessageOf(text) || `HTTP ${status}` };
}

/** Why a 2xx answer is not a complete one, or undefined when it is. */
function badAnswer(mode: ProbeMode, contentType: string, text: string): { errorClass: ProbeErrorClass; message: string } | undefined {
  if (mode === "plain") {
    try {
      JSON.parse(text);
      return undefined;
    } catch {
      return { errorClass: "bad_answer", message: `the answer is not JSON (${contentType || "no content-type"})` };
    }
  }
  if (!/^text\/event-stream/i.test(contentType)) {
    return { errorClass: "bad_answer", message: `asked to stream, answered ${contentType || "no content-type"}` };
  }
  // An error inside a stream (Anthropic's `event: error`, an OpenAI or Google `data: {"error":…}`).
  for (const line of text.split(/\r?\n/)) {
    if (!line.startsWith("data:")) continue;
    const error = errorObjectOf(line.slice(5).trim());
    if (error) return { errorClass: "bad_answer", message: `error in the stream: ${messageOfError(error) || line.slice(5).trim()}` };
  }
  if (!/^data:/m.test(text)) return { errorClass: "bad_answer", message: "the stream ended without an event" };
  return undefined;
}

function messageOfError(error: Readonly<Record<string, unknown>>): string {
  return typeof error.message === "string" ? error.message : "";
}

/** The message of a provider's error body, else the body (shown() cuts it, after blanking the key). */
function errorMessageOf(text: string): string {
  const error = errorObjectOf(text);
  return (error && messageOfError(error)) || text;
}

/** One line, at most MESSAGE_LIMIT characters, and never the key (a provider may quote it). */
export function shown(message: string, key: string): string {
  const blanked = key === "" ? message : message.split(key).join("[key]");
  const line = blanked.replace(/\s+/g, " ").trim();
  return line.length > MESSAGE_LIMIT ? `${line.slice(0, MESSAGE_LIMIT - 1)}…` : line;
}
