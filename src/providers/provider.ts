// Provider knowledge as data: each upstream kind is a small manifest of paths, auth and
// quirks, so transport code never branches on a vendor name.

import type { Protocol } from "../runtime/types.js";

/** Why a channel key is taken out of rotation: the provider refused it (its invalid-key or
 * forbidden answer), or the account behind it is out of credit or quota. */
export type KeyFault = "auth" | "quota";

/** An error answer's `error` object, as the provider wrote it. */
export type ErrorObject = Readonly<Record<string, unknown>>;

/**
 * What an error answer says of the key. `confirm` is set when only the error's message
 * says it: a message can echo the client's request (a field named like the fault), so the
 * gateway asks the provider itself (KeyFaultRules.probe) before taking the key out.
 */
export interface KeyVerdict {
  readonly fault: KeyFault;
  readonly confirm: boolean;
}

/**
 * A small request of the gateway's own on one key, whose answer shows a fault that the
 * provider states only in message text. The body is the gateway's, so that text is then
 * the provider's word, not an echo.
 */
export interface KeyProbe {
  /** The request for the channel's upstream model: path, headers beside the key's, body. */
  readonly request: (upstreamModel: string) => { readonly path: string; readonly headers: Record<string, string>; readonly body: string };
}

/**
 * How a provider says the channel key is at fault. Only the status and the structured
 * fields of its error (OpenAI `error.code`/`type`, Anthropic `error.type`, Google
 * `error.status` and `error.details[]`) decide, never a substring of a message, which may
 * quote the request. Such an answer is the key's fault, so the request is retried on
 * another key instead of reaching the client.
 */
export interface KeyFaultRules {
  /** The statuses whose error body is read to tell. */
  readonly statuses: readonly number[];
  /** The verdict on an answer of one of `statuses`; undefined when it is an ordinary answer. */
  readonly judge: (status: number, error: ErrorObject | undefined) => KeyVerdict | undefined;
  /** How to confirm a verdict with `confirm` set; a provider without one has none. */
  readonly probe?: KeyProbe;
}

/**
 * Which client request headers reach this protocol's upstream: an allow-list, so a header
 * the gateway does not know (an account selector, a method override, a field mask, SDK
 * telemetry, an idempotency key shared by every tenant of the one upstream account) never
 * does. Sets, built once: a request only looks names up.
 */
export interface RequestHeaderPolicy {
  /** Client headers a same-protocol request carries upstream as sent (lower case). */
  readonly passed: ReadonlySet<string>;
  /** Headers the gateway sets on the requests it encodes itself (conversions). */
  readonly fixed: Readonly<Record<string, string>>;
  /** The header listing opt-in protocol betas (a comma list): only the values the channel
   * allows (channels[].betas, default `defaultBetas`) pass, on any inbound protocol. */
  readonly betaHeader?: string;
  /** Betas a channel allows when it lists none: those the gateway knows and bills right. */
  readonly defaultBetas: ReadonlySet<string>;
}

/** Client headers worth carrying on every protocol: harmless, and useful in upstream logs. */
export const COMMON_PASSED_HEADERS = ["user-agent", "accept-language"] as const;

export interface ProviderSpec {
  readonly protocol: Protocol;
  /** What a client's request headers may carry upstream. */
  readonly requestHeaders: RequestHeaderPolicy;
  /** Upstream paths by operation, appended to the channel's base_url. */
  readonly paths: Readonly<Record<string, string>>;
  /** Headers that carry the channel key. */
  readonly authHeaders: (key: string) => Record<string, string>;
  /** Upstream response headers that identify the operator's account; never relayed. */
  readonly privateResponseHeaders: readonly string[];
  /** Which error answers mean the key is at fault. */
  readonly keyFaults: KeyFaultRules;
}

/** The verdict of `rules` on an answer with `status` and `body`; undefined for an ordinary one. */
export function judgeKeyFault(rules: KeyFaultRules, status: number, body: string): KeyVerdict | undefined {
  return rules.statuses.includes(status) ? rules.judge(status, errorObjectOf(body)) : undefined;
}

/** A verdict the provider's structured fields state. */
export const sure = (fault: KeyFault): KeyVerdict => ({ fault, confirm: false });

/** The `error` object of a JSON error body (providers nest one; xAI writes `error` as the
 * message itself, which is read as `{message}`), or undefined. */
export function errorObjectOf(body: string): ErrorObject | undefined {
  try {
    const parsed = JSON.parse(body) as { error?: unknown };
    if (parsed && typeof parsed.error === "string") return { message: parsed.error };
    return parsed && typeof parsed.error === "object" && parsed.error !== null ? parsed.error as ErrorObject : undefined;
  } catch {
    return undefined;
  }
}

/** Joins a base URL and an API path; a base that already ends in the path's version prefix
 * (".../v1" with "/v1/chat/completions") does not get it twice. */
export function upstreamUrl(base: URL, path: string): URL {
  let prefix = base.pathname.replace(/\/+$/, "");
  const version = path.slice(0, path.indexOf("/", 1));
  if (version && prefix.endsWith(version)) prefix = prefix.slice(0, -version.length);
  const q = path.indexOf("?");
  const url = new URL(base.href);
  url.pathname = prefix + (q === -1 ? path : path.slice(0, q));
  url.search = q === -1 ? "" : path.slice(q);
  return url;
}

const channelUrls = new WeakMap<URL, Map<string, URL>>();

/** Paths remembered per base URL; paths that carry a model or a query vary without bound. */
const MEMO_PATHS = 64;

/** upstreamUrl, memoised per base URL (each channel's lives as long as its Runtime). */
export function channelUrl(base: URL, path: string): URL {
  let byPath = channelUrls.get(base);
  if (!byPath) {
    byPath = new Map();
    channelUrls.set(base, byPath);
  }
  let url = byPath.get(path);
  if (!url) {
    url = upstreamUrl(base, path);
    if (byPath.size < MEMO_PATHS) byPath.set(path, url);
  }
  return url;
}
