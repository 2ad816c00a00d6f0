// Provider knowledge as data: each upstream kind is a small manifest of paths, auth and
// quirks, so transport code never branches on a vendor name.

import type { ChannelProtocol } from "../runtime/types.js";

/** A bad-key refusal sent with an ordinary status (see ProviderSpec.credentialRefusal). */
export interface CredentialRefusal {
  readonly status: number;
  readonly test: (body: string) => boolean;
}

export interface ProviderSpec {
  readonly protocol: ChannelProtocol;
  /** Upstream paths by operation, appended to the channel's base_url. */
  readonly paths: Readonly<Record<string, string>>;
  /** Headers that carry the channel key. */
  readonly authHeaders: (key: string) => Record<string, string>;
  /** Upstream response headers that identify the operator's account; never relayed. */
  readonly privateResponseHeaders: readonly string[];
  /**
   * For a provider that reports a bad channel key with a status other than 401/403: the
   * status to look at, and how to recognise the refusal in its body. Such an answer is
   * the channel's fault, so it fails over like a 401 instead of reaching the client.
   */
  readonly credentialRefusal?: CredentialRefusal;
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
