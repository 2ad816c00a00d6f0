// Provider knowledge as data: each upstream kind is a small manifest of paths, auth and
// quirks, so transport code never branches on a vendor name.

import type { ChannelProtocol } from "../runtime/types.js";

/** Why a channel key is taken out of rotation: the provider refused it (401/403, or its
 * own invalid-key answer), or the account behind it is out of credit or quota. */
export type KeyFault = "auth" | "quota";

/**
 * How a provider says with an ordinary status that the channel key is at fault (Gemini:
 * 400 API_KEY_INVALID; OpenAI: 429 insufficient_quota): the statuses whose body is read
 * to tell, and what the body means. Such an answer is the key's fault, so the request is
 * retried on another key instead of reaching the client.
 */
export interface KeyFaultBodies {
  readonly statuses: readonly number[];
  /** The fault the body names; undefined when it is an ordinary answer of that status. */
  readonly classify: (status: number, body: string) => KeyFault | undefined;
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
  readonly protocol: ChannelProtocol;
  /** What a client's request headers may carry upstream. */
  readonly requestHeaders: RequestHeaderPolicy;
  /** Upstream paths by operation, appended to the channel's base_url. */
  readonly paths: Readonly<Record<string, string>>;
  /** Headers that carry the channel key. */
  readonly authHeaders: (key: string) => Record<string, string>;
  /** Upstream response headers that identify the operator's account; never relayed. */
  readonly privateResponseHeaders: readonly string[];
  /** Answers with a status other than 401/403 that still mean the key is at fault. */
  readonly keyFaultBodies?: KeyFaultBodies;
}

/** The fault a 401 or 403 names: the provider refused the key. */
export function keyFaultOfStatus(status: number): KeyFault | undefined {
  return status === 401 || status === 403 ? "auth" : undefined;
}

/** The `error` object of a JSON error body (every provider nests one), or undefined. */
export function errorObjectOf(body: string): Record<string, unknown> | undefined {
  try {
    const parsed = JSON.parse(body) as { error?: unknown };
    return parsed && typeof parsed.error === "object" && parsed.error !== null ? parsed.error as Record<string, unknown> : undefined;
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
