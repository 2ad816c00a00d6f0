// What to do about each catalogued error, for the people who meet it: the client that got it
// and the operator it reports. docs/errors.md is generated from this and the catalogue, and a
// test requires an entry for every catalogue code, so a new error cannot land undocumented.

/** Advice by catalogue code: when the error happens and what fixes it. */
export const errorAdvice: Readonly<Record<string, string>> = Object.freeze({
  not_found:
    "The path is not one the gateway serves (or is absurdly long), or a video job id, a stored response (`previous_response_id`), or an uploaded file, vector store, container or cached content this account did not create here (the gateway serves none of the APIs that create the last four). Usually a wrong base URL: OpenAI-style SDKs take `{base_url}/v1`, the Anthropic and Gemini SDKs take `{base_url}` itself.",
  method_not_allowed:
    "The path exists but not with this HTTP method (e.g. `GET /v1/chat/completions`). Use the method the endpoint documents, usually `POST`.",
  missing_token:
    "The request carried no access token. Send it as `Authorization: Bearer <key>`, `x-api-key` (messages) or `x-goog-api-key` / `?key=` (generate-content).",
  invalid_token:
    "No token in `tokens` has this key (compared by sha256). Check for a stray space or an old key; an operator can check that the token's `key` variable is set where the gateway runs (an empty key is skipped with a warning at load).",
  token_expired:
    "The token's `expires` time has passed. The operator moves `expires` forward (or removes it) in gateway.yaml, or issues a new token.",
  token_disabled:
    "The token's `status` is `disabled`. The operator sets it back to `active`.",
  user_disabled:
    "The token's user is `status: disabled` (or no longer exists under `users`). The operator re-enables the user.",
  token_quota_exhausted:
    "The token has spent its `quota`. The operator raises `tokens[].quota` (it reloads live) or gives the client another token; `gateway usage --by token` shows the spend.",
  insufficient_quota:
    "The user's balance (`credit` minus what its tokens spent) is used up. The operator raises `users.<user>.credit`, which tops it up on reload. 402 is not retried by the SDKs, so the client fails at once instead of burning retries.",
  pre_deduction_failed:
    "The balance or the token's quota cannot hold this request's worst case (its input plus its `max_tokens`, or the model's `max_output_tokens`). The message gives the remaining amount and the pre-deduction: lower `max_tokens`, or top up.",
  rate_limited:
    "The token passed a limit under `limits` (its own, its user's or its plan's, or the site-wide ones); the message names it (\"… N requests per M minutes\"). Wait for `Retry-After` seconds, which the SDKs do by themselves, or ask the operator for a higher limit.",
  budget_exceeded:
    "A budget that resets (`budgets:` of the token, its user or its plan) has no room for this request's worst case; the message names the budget, what the request may cost, and when it resets (calendar budgets, in `usage.timezone`) or when enough of it frees (rolling ones). A wait of more than a minute carries `x-should-retry: false`, so the SDKs do not retry at once. The operator raises the budget or moves the user to another plan; both reload live.",
  missing_admin_key:
    "An `/admin/v1/` request carried no `Authorization: Bearer <admin key>`. Send a key `admin.keys` declares; only `GET /admin/v1/openapi.json` needs none.",
  invalid_admin_key:
    "The admin key is not one `admin.keys` declares (compared by sha256). Check for a stray space, or that the key's environment variable is set (an empty key is skipped with a warning at load).",
  admin_scope_missing:
    "The key lacks the scope the route needs (named in the message): `read` for every GET, `write` for users and tokens, `billing` for credit and codes. Add it to the key's `scopes` (reloads live) or use another key.",
  name_taken:
    "A user, token or code batch of that name exists, in the store or in gateway.yaml (the message says which). Choose another name; a revoked token's name stays taken.",
  version_conflict:
    "The change named the version it read (`version` or `If-Match`) and another change landed first; nothing was applied. Read the resource again and retry on its new version.",
  idempotency_mismatch:
    "The idempotency key was used before for a different user or amount. A retry must repeat the same request; a new credit needs a new key.",
  key_taken:
    "The token's key belongs to another token (met when importing keys): give it another key.",
  console_signin_refused:
    "The secret typed into the console's sign-in is no token the gateway knows that may be used now (disabled, expired, revoked, or its user disabled), nor a key `admin.keys` declares. Failed sign-ins from one address are rate-limited (10 a minute): after that, 429 until the window frees.",
  console_not_signed_in:
    "The console call carried no session cookie, or its session expired (12 hours idle), was signed out, or ended because its token was disabled or revoked or its admin key removed. Sign in again.",
  console_csrf_mismatch:
    "A console call that changes something (any method but GET) must carry the session's CSRF token in `x-csrf-token`, as the console's own pages do; a page of another site cannot. Reload the console and retry.",
  console_operators_elsewhere:
    "`admin.listen` is set, so the admin API and operators' console sessions are served only on that address; customers still sign in on the main one. Open `/console` on the admin address.",
  customer_tokens_off:
    "A customer signed in to the console tried to create, change or revoke a token while `console.customer_tokens` is false (the default), or a token the operator keeps: one gateway.yaml declares, or one the operator disabled. The operator sets `console.customer_tokens: true` (it reloads live), or makes the change through the admin API or `gateway tokens`.",
  ip_not_allowed:
    "The client address is not in the token's `allow_ips`. Behind a reverse proxy, the operator sets `server.trust_proxy: true` so the address comes from X-Forwarded-For; otherwise add the address or range to `allow_ips`.",
  model_not_allowed:
    "The model is not in the token's `models` list (exact names or globs). The operator adds it, or the client uses an allowed model.",
  group_not_allowed:
    "The token's `group` is not one of its user's `groups`. The operator adds the group to `users.<user>.groups` or moves the token to a group the user has; `gateway check` warns about this at load.",
  body_too_large:
    "The request body is larger than `server.max_body` (default 32MiB). Send less (smaller images, fewer files), or the operator raises `max_body`.",
  request_timeout:
    "The client took longer than `server.header_timeout` to send its headers, or its body went silent for `server.body_timeout`. Usually a stalled network; the SDKs retry it.",
  body_memory_exhausted:
    "The bodies of the requests in flight together reached `server.max_body_memory`; answered with `Retry-After: 1` and retried by the SDKs. Frequent ones mean the gateway needs a larger budget or more instances.",
  malformed_request:
    "node could not parse the request as HTTP (bad framing, an invalid header). Answered before any route, in the OpenAI shape, and the connection is closed. Usually a broken client or a proxy speaking another protocol.",
  headers_too_large:
    "The request's headers exceeded node's header size limit. Answered before any route, and the connection is closed. Usually an oversized cookie or a client sending too much in headers.",
  expectation_failed:
    "The request sent an `Expect` header other than `100-continue`. Drop the header.",
  client_closed_request:
    "The client hung up before its request was read; recorded in logs and metrics (status 499), never seen by the client. Many of them point at client timeouts shorter than the model's answers.",
  invalid_json:
    "The body is not valid JSON. Check the client's serialisation and `Content-Type`.",
  unsupported_media_type:
    "The endpoint takes JSON and the body was sent as something else. Send `Content-Type: application/json` (multipart endpoints such as transcriptions take `multipart/form-data`).",
  missing_required_parameter:
    "A required field is absent (`model`, `messages`, `input`, …, or one a model's `request_schema` requires); the message names it. Fix the request.",
  invalid_parameter:
    "A field has a wrong value or type, a multipart body is malformed, or a field cannot be converted for the model's channel; the message names the field. Fix the request.",
  missing_version_header:
    "A messages request (`/v1/messages`) came without the `anthropic-version` header. The Anthropic SDKs send it; a hand-written client adds `anthropic-version: 2023-06-01`.",
  model_not_found:
    "The model is not in the price list (`models`). Model names are exact and case-sensitive; `GET /v1/models` lists those the token may use. The operator adds the model under `models` and to a channel's `models`.",
  wrong_endpoint:
    "The model is priced for another kind of endpoint (e.g. an embeddings model called on chat completions); the message names the path to call. To open a chat model to `/v1/responses`, the operator prices it `endpoint: [chat, responses]`.",
  upgrade_required:
    "`/v1/realtime` is a WebSocket: connect with an `Upgrade: websocket` request, as the realtime SDKs do.",
  affinity_channel_unavailable:
    "The request names a session (`x-gateway-session-id`, `prompt_cache_key` or `metadata.user_id`) bound to a channel that is now disabled or removed. Start a new session id; the operator can also set `routing.affinity_ttl: 0` to turn affinity off.",
  channel_not_found:
    "No enabled channel serves this model in the token's group. The operator lists the model and the group on a channel (`channels[].models`, `channels[].groups`) and checks that the channel has keys (one without keys starts disabled).",
  upstream_rejected:
    "The provider refused the converted request with a 4xx; the status is the provider's and the message quotes its reason. Usually a request the model does not accept (unknown parameter, context too long): fix the request.",
  stored_state_not_allowed:
    "The request asks the provider to keep or look up state (`store: true`, `previous_response_id`, `item_reference`, a stored `prompt`, a `conversation`, `background`) for a model whose operator does not allow it: such objects live under the operator's one upstream account. Leave `store` out and send the whole conversation in `input`; the operator may allow storing per model (`models.<name>.store`, `stored_prompts`).",
  conversion_unsupported:
    "The request needs something the channel's protocol cannot express (e.g. `n` > 1, logprobs or audio output toward another provider, a realtime session without an OpenAI-protocol channel). Send it to a model served in its own protocol, or drop the field.",
  upstream_rate_limited:
    "Every channel tried answered 429. The answer carries the provider's `Retry-After` when it gave one, and the SDKs retry. Frequent ones mean the operator needs more keys or channels for the model.",
  upstream_error:
    "The provider answered with a server error (its 500–503 status is passed on, others become 502), or an answer that was unusable (not JSON, cut short, undecodable); mid-stream, the stream ended with an error event and what was delivered is billed as a marked estimate. Retry; persistent ones show in the channel's metrics and `gateway logs`.",
  upstream_unavailable:
    "No channel could be reached (connection refused, DNS, TLS). The operator checks `channels[].base_url` and the network path from the gateway.",
  upstream_auth_failed:
    "The provider refused every key of the channels tried (a 401/403 whose error fields blame the key, Gemini's 400 with reason API_KEY_INVALID, Anthropic's disabled organization once the gateway's own probe confirmed it), in this request or within `channels[].key_cooldown.auth` before it (such keys are out of rotation). The operator checks `gateway channels` and replaces the keys it shows out for `auth`; changing a channel's `keys` puts them back at once. The provider's body is not echoed since it may quote the key.",
  upstream_quota_exhausted:
    "Every key of the channels tried is out of credit or quota (OpenAI 429 insufficient_quota, Anthropic's 402 billing_error or its credit balance too low once the gateway's own probe confirmed it, Gemini's per-day quota used up), in this request or within `channels[].key_cooldown.quota` before it. The operator tops up the provider account, then reloads with changed `keys` or waits out the cooldown; `gateway channels` shows which keys are out. Retrying soon does not help.",
  upstream_timeout:
    "The provider did not answer within `server.upstream_timeout`, or a stream went silent for `server.stream_idle_timeout`; not retried on another channel. Retry later; raise the timeout for slow models.",
  state_unavailable:
    "Redis (`store`) or PostgreSQL (`ledger`) is unreachable, so a billed request is refused rather than served unbilled (`Retry-After: 2`; the SDKs retry). `/healthz` names the server in `degraded`; service resumes by itself once it answers.",
  realtime_session_too_long:
    "A realtime session lasted `server.realtime_max_session` (default 30m); the gateway sent this error event and closed it (close code 1008), billing what it used. Reconnect to continue; the operator can raise the limit.",
  realtime_too_many_responses:
    "A realtime client sent more than 16 `response.create` events that the upstream had not started yet (each is admitted and holds its pre-deduction until it starts). Wait for `response.created` or `response.done` before asking for the next response.",
  realtime_peer_stalled:
    "In a realtime session one side stopped reading while the other kept sending, and the frames queued for it passed the relay's bound (the sender is paused long before that). The session was ended (close code 1014); reconnect.",
  shutting_down:
    "The gateway is draining after SIGTERM and takes no new requests; another instance (or the restarted one) serves the retry.",
  internal_error:
    "A bug in the gateway, or a charge that could not be written (a full disk): the answer is withheld rather than served unbilled. The log line with this request id has the stack; report it with the `X-Gateway-Request-Id`.",
});
