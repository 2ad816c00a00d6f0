// Azure OpenAI's URLs for a request built for OpenAI's API. With an api-version, the
// operations Azure serves per deployment go to /openai/deployments/{deployment}/… (the
// deployment is the upstream model: model_map's value) with ?api-version=; everything else,
// and every operation without an api-version, goes to the v1 API (/openai/v1/…, the model
// in the body), which is the only home of the Responses API on Azure.

/** OpenAI paths (after /v1) that Azure serves per deployment under an api-version. */
const DEPLOYMENT_OPERATIONS: ReadonlySet<string> = new Set([
  "/chat/completions", "/completions", "/embeddings",
  "/images/generations", "/images/edits",
  "/audio/transcriptions", "/audio/translations", "/audio/speech",
]);

/** The resource's base path: base_url without a trailing "/openai" or "/openai/v1" the
 * operator may have copied from Azure's portal (an APIM prefix before it stays). */
function resourcePath(base: URL): string {
  return base.pathname.replace(/\/+$/, "").replace(/\/openai(\/v1)?$/, "");
}

/** Azure's URL for `path` (an OpenAI API path with its query, e.g. "/v1/chat/completions"). */
export function azureUrl(base: URL, path: string, deployment: string, apiVersion: string | undefined): URL {
  const q = path.indexOf("?");
  const bare = q === -1 ? path : path.slice(0, q);
  const operation = bare.startsWith("/v1/") ? bare.slice(3) : bare;
  const url = new URL(base.href);
  url.search = q === -1 ? "" : path.slice(q);
  if (apiVersion !== undefined && DEPLOYMENT_OPERATIONS.has(operation)) {
    url.pathname = `${resourcePath(base)}/openai/deployments/${encodeURIComponent(deployment)}${operation}`;
    url.searchParams.set("api-version", apiVersion);
  } else {
    url.pathname = `${resourcePath(base)}/openai/v1${operation}`;
  }
  return url;
}
