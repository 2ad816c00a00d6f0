// The auth matrix of SPEC.md § Authentication and § Errors, end to end: the real gateway
// on 127.0.0.1:0 (and [::1]:0), a fake OpenAI upstream, the openai SDK and raw HTTP.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import OpenAI from "openai";
import { startFakeOpenAI, type FakeOpenAI } from "../helpers/fake-openai.js";
import { startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import {
  CHANNEL_KEY, TOKEN, channel, config, hello, postChat, rawRequest, token, type RawResponse,
} from "./support.js";

const K = {
  expired: "sk-gw-expired-token-000001",
  future: "sk-gw-future-expiry-000002",
  disabled: "sk-gw-disabled-token-00003",
  bobs: "sk-gw-bob-disabled-user-04",
  carols: "sk-gw-carol-wrong-group-05",
  ip10: "sk-gw-ip-10-slash-8-000006",
  ip127: "sk-gw-ip-127-slash-8-00007",
  ip6: "sk-gw-ip-2001-db8-0000008",
  ipLoop6: "sk-gw-ip-loopback-v6-00009",
  glob: "sk-gw-glob-gpt-4o-star-010",
};

const yaml = (server: Record<string, unknown> = {}) => (fakeUrl: string) => config({
  server,
  users: {
    alice: { credit: 100, groups: ["default", "video"] },
    bob: { credit: 100, groups: ["default"], status: "disabled" },
    carol: { credit: 100, groups: ["default"] },
  },
  tokens: [
    token("alice-main", TOKEN),
    token("expired", K.expired, { expires: "2020-01-01T00:00:00Z" }),
    token("future", K.future, { expires: "2999-01-01T00:00:00Z" }),
    token("disabled", K.disabled, { status: "disabled" }),
    token("bobs", K.bobs, { user: "bob" }),
    token("carols", K.carols, { user: "carol", group: "video" }),
    token("ip10", K.ip10, { allow_ips: ["10.0.0.0/8"] }),
    token("ip127", K.ip127, { allow_ips: ["127.0.0.0/8"] }),
    token("ip6", K.ip6, { allow_ips: ["2001:db8::/32"] }),
    token("ip-loop6", K.ipLoop6, { allow_ips: ["::1"] }),
    token("glob", K.glob, { models: ["gpt-4o-*"] }),
  ],
  channels: [channel("main", fakeUrl, {
    groups: ["default", "video"],
    models: ["gpt-4o-mini", "gpt-4o-2024-08-06", "claude-sonnet-4-5", "gemini-2.5-flash"],
  })],
});

function assertOpenAIError(r: RawResponse, status: number, code: string, type = "gateway_error"): void {
  assert.equal(r.status, status, `status (body: ${r.text})`);
  assert.match(String(r.headers["content-type"]), /application\/json/);
  assert.ok(r.headers["x-gateway-request-id"], "request id header");
  assert.equal(r.json?.error?.code, code, r.text);
  assert.equal(r.json?.error?.type, type, r.text);
  assert.equal(typeof r.json?.error?.message, "string");
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

describe("auth matrix (chat-completions family)", () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let proxyGw: TestGateway;

  before(async () => {
    fake = await startFakeOpenAI({ keys: [CHANNEL_KEY], name: "main" });
    gw = await startTestGateway(yaml()(fake.url));
    proxyGw = await startTestGateway(yaml({ trust_proxy: true })(fake.url));
  });
  after(async () => {
    await gw?.close();
    await proxyGw?.close();
    await fake?.close();
    destroyAgents();
  });

  /** Runs a denied request and checks it never reached the upstream. */
  async function denied(p: Promise<RawResponse>): Promise<RawResponse> {
    const before = fake.received.length;
    const r = await p;
    assert.equal(fake.received.length, before, "a refused request must not reach the upstream");
    return r;
  }

  test("a valid token gets 200 and the channel key (not the client token) goes upstream", async () => {
    const before = fake.received.length;
    const r = await postChat(gw.url, hello);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.choices[0].message.content, "main says: hello");
    assert.equal(fake.received.length, before + 1);
    const got = fake.received[fake.received.length - 1];
    assert.equal(got.headers.authorization, `Bearer ${CHANNEL_KEY}`);
    const all = JSON.stringify(got.headers);
    assert.ok(!all.includes(TOKEN), "client token must never reach the upstream");
  });

  test("no token at all: 401 missing_token saying no token was provided", async () => {
    const r = await denied(postChat(gw.url, hello, { authorization: "" }));
    assertOpenAIError(r, 401, "missing_token");
    assert.match(r.json.error.message, /no access token was provided/i);
    const r2 = await denied(rawRequest(`${gw.url}/v1/chat/completions`, {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(hello),
    }));
    assertOpenAIError(r2, 401, "missing_token");
    assert.match(r2.json.error.message, /no access token was provided/i);
  });

  test("a token only in x-api-key on an OpenAI route is not accepted (401 missing_token)", async () => {
    const r = await denied(rawRequest(`${gw.url}/v1/chat/completions`, {
      method: "POST", headers: { "content-type": "application/json", "x-api-key": TOKEN }, body: JSON.stringify(hello),
    }));
    assertOpenAIError(r, 401, "missing_token");
  });

  test("whitespace in or around the token: 401", async () => {
    for (const auth of [`Bearer  ${TOKEN}`, `Bearer ${TOKEN.slice(0, 8)} ${TOKEN.slice(8)}`, `Bearer \t${TOKEN}`, `Bearer${TOKEN}`]) {
      const r = await denied(postChat(gw.url, hello, { authorization: auth }));
      assert.equal(r.status, 401, `${JSON.stringify(auth)} → ${r.status} ${r.text}`);
      assert.equal(r.json.error.code, "invalid_token");
    }
  });

  test("unknown token: 401 invalid_token", async () => {
    const r = await denied(postChat(gw.url, hello, bearer("sk-gw-nobody-knows-me")));
    assertOpenAIError(r, 401, "invalid_token");
    assert.ok(!r.text.includes("sk-gw-nobody-knows-me"), "the presented token is not echoed back");
  });

  test("expired token: 401 token_expired; a future expiry works", async () => {
    assertOpenAIError(await denied(postChat(gw.url, hello, bearer(K.expired))), 401, "token_expired");
    assert.equal((await postChat(gw.url, hello, bearer(K.future))).status, 200);
  });

  test("disabled token: 401 token_disabled", async () => {
    assertOpenAIError(await denied(postChat(gw.url, hello, bearer(K.disabled))), 401, "token_disabled");
  });

  test("disabled user: 401 user_disabled", async () => {
    assertOpenAIError(await denied(postChat(gw.url, hello, bearer(K.bobs))), 401, "user_disabled");
  });

  test("token group not among the user's groups: 403 group_not_allowed", async () => {
    const r = await denied(postChat(gw.url, hello, bearer(K.carols)));
    assertOpenAIError(r, 403, "group_not_allowed");
    assert.match(r.json.error.message, /video/);
  });

  test("allow_ips: 127.0.0.1 outside 10.0.0.0/8 → 403, inside 127.0.0.0/8 → 200", async () => {
    assertOpenAIError(await denied(postChat(gw.url, hello, bearer(K.ip10))), 403, "ip_not_allowed");
    assert.equal((await postChat(gw.url, hello, bearer(K.ip127))).status, 200);
    // an IPv6-only allowlist does not admit an IPv4 client
    assertOpenAIError(await denied(postChat(gw.url, hello, bearer(K.ip6))), 403, "ip_not_allowed");
  });

  test("trust_proxy false: X-Forwarded-For is ignored", async () => {
    const xff = { "x-forwarded-for": "10.1.2.3" };
    assertOpenAIError(await denied(postChat(gw.url, hello, { ...bearer(K.ip10), ...xff })), 403, "ip_not_allowed");
    assert.equal((await postChat(gw.url, hello, { ...bearer(K.ip127), ...xff })).status, 200);
  });

  test("trust_proxy true: X-Forwarded-For decides (allowed and denied, IPv4 and IPv6)", async () => {
    const r = await postChat(proxyGw.url, hello, { ...bearer(K.ip10), "x-forwarded-for": "10.1.2.3" });
    assert.equal(r.status, 200, r.text);
    assertOpenAIError(await denied(postChat(proxyGw.url, hello, { ...bearer(K.ip127), "x-forwarded-for": "10.1.2.3" })),
      403, "ip_not_allowed");
    assertOpenAIError(await denied(postChat(proxyGw.url, hello, { ...bearer(K.ip10), "x-forwarded-for": "192.0.2.1" })),
      403, "ip_not_allowed");
    assert.equal((await postChat(proxyGw.url, hello, { ...bearer(K.ip6), "x-forwarded-for": "2001:db8::42" })).status, 200);
    assertOpenAIError(await denied(postChat(proxyGw.url, hello, { ...bearer(K.ip6), "x-forwarded-for": "2001:db9::42" })),
      403, "ip_not_allowed");
    // the entry the trusted proxy appended (the last) is the client; earlier ones are whatever
    // the client itself sent and cannot be trusted (else anyone could spoof an allowed address)
    assertOpenAIError(await denied(postChat(proxyGw.url, hello, { ...bearer(K.ip10), "x-forwarded-for": "10.9.9.9, 192.0.2.7" })),
      403, "ip_not_allowed");
    assert.equal((await postChat(proxyGw.url, hello, { ...bearer(K.ip10), "x-forwarded-for": "192.0.2.7, 10.1.2.3" })).status, 200);
    // the forwarded header never goes upstream
    const last = fake.received[fake.received.length - 1];
    assert.equal(last.headers["x-forwarded-for"], undefined);
  });

  test("model allowlist with a glob: gpt-4o-* allowed, others 403 model_not_allowed", async () => {
    assert.equal((await postChat(gw.url, { ...hello, model: "gpt-4o-mini" }, bearer(K.glob))).status, 200);
    assert.equal((await postChat(gw.url, { ...hello, model: "gpt-4o-2024-08-06" }, bearer(K.glob))).status, 200);
    const r = await denied(postChat(gw.url, { ...hello, model: "claude-sonnet-4-5" }, bearer(K.glob)));
    assertOpenAIError(r, 403, "model_not_allowed");
    assert.match(r.json.error.message, /claude-sonnet-4-5/);
  });

  test("unknown model: 404 model_not_found naming the model (IDs are case-sensitive)", async () => {
    for (const model of ["gpt-5-imaginary", "GPT-4o-mini"]) {
      const r = await denied(postChat(gw.url, { ...hello, model }));
      assertOpenAIError(r, 404, "model_not_found", "invalid_request_error");
      assert.ok(r.json.error.message.includes(`'${model}'`), r.json.error.message);
    }
  });

  test("openai SDK: error classes and statuses", async () => {
    const sdk = (apiKey: string) => new OpenAI({ apiKey, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const call = (apiKey: string, model = "gpt-4o-mini") =>
      sdk(apiKey).chat.completions.create({ model, messages: [{ role: "user", content: "hi" }] });

    const ok = await call(TOKEN);
    assert.equal(ok.choices[0].message.content, "main says: hi");

    type ErrorClass = abstract new (...args: never[]) => InstanceType<typeof OpenAI.APIError>;
    const cases: [string, string, ErrorClass, number, string][] = [
      ["sk-gw-unknown-0000000000", "gpt-4o-mini", OpenAI.AuthenticationError, 401, "invalid_token"],
      [` ${TOKEN}`, "gpt-4o-mini", OpenAI.AuthenticationError, 401, "invalid_token"],
      [K.expired, "gpt-4o-mini", OpenAI.AuthenticationError, 401, "token_expired"],
      [K.disabled, "gpt-4o-mini", OpenAI.AuthenticationError, 401, "token_disabled"],
      [K.bobs, "gpt-4o-mini", OpenAI.AuthenticationError, 401, "user_disabled"],
      [K.carols, "gpt-4o-mini", OpenAI.PermissionDeniedError, 403, "group_not_allowed"],
      [K.ip10, "gpt-4o-mini", OpenAI.PermissionDeniedError, 403, "ip_not_allowed"],
      [K.glob, "claude-sonnet-4-5", OpenAI.PermissionDeniedError, 403, "model_not_allowed"],
      [TOKEN, "no-such-model", OpenAI.NotFoundError, 404, "model_not_found"],
    ];
    for (const [key, model, cls, status, code] of cases) {
      await assert.rejects(call(key, model), (err: unknown) => {
        assert.ok(err instanceof cls, `${code}: expected ${cls.name}, got ${(err as Error)?.constructor?.name}`);
        const e = err as InstanceType<typeof OpenAI.APIError>;
        assert.equal(e.status, status);
        assert.equal(e.code, code);
        assert.ok(e.headers?.get("x-gateway-request-id"), "request id visible to SDK users");
        return true;
      });
    }
    // models.list confirms a valid token (SPEC § Authentication rule 4) and refuses a bad one
    const list = await sdk(TOKEN).models.list();
    assert.ok(list.data.some((m) => m.id === "gpt-4o-mini"));
    await assert.rejects(sdk("sk-gw-unknown-0000000000").models.list(), OpenAI.AuthenticationError);
  });

  test("client credentials in other headers (x-api-key, x-goog-api-key, cookie) are not forwarded", async () => {
    const r = await postChat(gw.url, hello, {
      "x-api-key": K.future, "x-goog-api-key": K.glob, cookie: `session=${K.ip127}`, "proxy-authorization": `Basic ${K.ip10}`,
      "x-gateway-debug": "1", "openai-organization": "org-client-sent",
    });
    assert.equal(r.status, 200, r.text);
    const got = fake.received[fake.received.length - 1].headers;
    for (const name of ["x-api-key", "x-goog-api-key", "cookie", "proxy-authorization", "x-gateway-debug"]) {
      assert.equal(got[name], undefined, `${name} forwarded upstream`);
    }
    assert.equal(got.authorization, `Bearer ${CHANNEL_KEY}`);
  });

  test("no request so far sent the client token or another client credential upstream", () => {
    assert.ok(fake.received.length > 0);
    const secrets = [TOKEN, ...Object.values(K)];
    for (const r of fake.received) {
      assert.equal(r.headers.authorization, `Bearer ${CHANNEL_KEY}`);
      const text = JSON.stringify(r.headers) + JSON.stringify(r.body);
      for (const s of secrets) assert.ok(!text.includes(s), `client token ${s} leaked upstream`);
    }
  });
});

describe("auth errors in the messages and generate-content shapes", () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;

  before(async () => {
    fake = await startFakeOpenAI({ keys: [CHANNEL_KEY] });
    gw = await startTestGateway(yaml()(fake.url));
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
    destroyAgents();
  });

  const messagesBody = JSON.stringify({ model: "claude-sonnet-4-5", max_tokens: 16, messages: [{ role: "user", content: "hi" }] });
  const messages = (headers: Record<string, string>) => rawRequest(`${gw.url}/v1/messages`, {
    method: "POST", body: messagesBody,
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01", ...headers },
  });

  function assertMessagesError(r: RawResponse, status: number, anthropicType: string, code: string): void {
    assert.equal(r.status, status, r.text);
    assert.ok(r.headers["x-gateway-request-id"]);
    assert.equal(r.json?.type, "error", r.text);
    assert.equal(r.json.error.type, anthropicType, r.text);
    assert.equal(r.json.error.code, code, r.text);
    assert.equal(typeof r.json.error.message, "string");
  }

  test("messages: no x-api-key → 401 authentication_error in the messages shape", async () => {
    const r = await messages({});
    assertMessagesError(r, 401, "authentication_error", "missing_token");
    assert.match(r.json.error.message, /no access token was provided/i);
    assert.match(r.json.error.message, /x-api-key/);
  });

  test("messages: unknown, expired, disabled-user, IP and group denials keep the messages shape", async () => {
    assertMessagesError(await messages({ "x-api-key": "sk-gw-unknown-0000000000" }), 401, "authentication_error", "invalid_token");
    // (leading/trailing whitespace of a header value is stripped by HTTP itself; inner whitespace is not)
    assertMessagesError(await messages({ "x-api-key": `${TOKEN.slice(0, 6)} ${TOKEN.slice(6)}` }), 401, "authentication_error", "invalid_token");
    assertMessagesError(await messages({ "x-api-key": K.expired }), 401, "authentication_error", "token_expired");
    assertMessagesError(await messages({ "x-api-key": K.bobs }), 401, "authentication_error", "user_disabled");
    assertMessagesError(await messages({ "x-api-key": K.ip10 }), 403, "permission_error", "ip_not_allowed");
    assertMessagesError(await messages({ "x-api-key": K.carols }), 403, "permission_error", "group_not_allowed");
  });

  test("messages: an authenticated request is served (converted for the OpenAI channel) in the messages shape", async () => {
    for (const auth of [{ "x-api-key": TOKEN }, { authorization: `Bearer ${TOKEN}` }] as Record<string, string>[]) {
      const r = await messages(auth);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.type, "message", r.text);
      assert.equal(r.json.content[0].type, "text");
      assert.equal(fake.received.at(-1)?.headers.authorization, `Bearer ${CHANNEL_KEY}`);
    }
  });

  const gemini = (query: string, headers: Record<string, string>) =>
    rawRequest(`${gw.url}/v1beta/models/gemini-2.5-flash:generateContent${query}`, {
      method: "POST", headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({ contents: [{ parts: [{ text: "hi" }] }] }),
    });

  function assertGeminiError(r: RawResponse, status: number, rpc: string, reason: string): void {
    assert.equal(r.status, status, r.text);
    assert.ok(r.headers["x-gateway-request-id"]);
    assert.equal(r.json?.error?.code, status, r.text);
    assert.equal(typeof r.json.error.code, "number");
    assert.equal(r.json.error.status, rpc, r.text);
    assert.equal(typeof r.json.error.message, "string");
    assert.ok(JSON.stringify(r.json.error.details ?? []).includes(reason), `reason ${reason} in ${r.text}`);
  }

  test("generate-content: no key → 401 UNAUTHENTICATED with a numeric code", async () => {
    const r = await gemini("", {});
    assertGeminiError(r, 401, "UNAUTHENTICATED", "missing_token");
    assert.match(r.json.error.message, /no access token was provided/i);
  });

  test("generate-content: bad keys by header or ?key=, and policy denials, keep the gemini shape", async () => {
    assertGeminiError(await gemini("", { "x-goog-api-key": "sk-gw-unknown-0000000000" }), 401, "UNAUTHENTICATED", "invalid_token");
    assertGeminiError(await gemini("?key=sk-gw-unknown-0000000000", {}), 401, "UNAUTHENTICATED", "invalid_token");
    assertGeminiError(await gemini(`?key=${K.expired}`, {}), 401, "UNAUTHENTICATED", "token_expired");
    assertGeminiError(await gemini("", { "x-goog-api-key": K.disabled }), 401, "UNAUTHENTICATED", "token_disabled");
    assertGeminiError(await gemini("", { "x-goog-api-key": K.ip10 }), 403, "PERMISSION_DENIED", "ip_not_allowed");
    assertGeminiError(await gemini(`?key=${K.carols}`, {}), 403, "PERMISSION_DENIED", "group_not_allowed");
  });

  test("generate-content: authenticated by header or ?key= → served in the generate-content shape", async () => {
    for (const [q, h] of [["", { "x-goog-api-key": TOKEN }], [`?key=${TOKEN}`, {}]] as const) {
      const r = await gemini(q, h);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.candidates[0].content.role, "model", r.text);
      const seen = fake.received.at(-1)!;
      assert.equal(seen.headers.authorization, `Bearer ${CHANNEL_KEY}`);
      assert.ok(!seen.path.includes("key="), "the client's ?key= never goes upstream");
    }
  });

  test("official Anthropic and Google SDKs see the right errors", async () => {
    const anthropic = (key: string) => new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 0 })
      .messages.create({ model: "claude-sonnet-4-5", max_tokens: 8, messages: [{ role: "user", content: "hi" }] });
    await assert.rejects(anthropic("sk-gw-unknown-0000000000"), (err: unknown) =>
      err instanceof Anthropic.AuthenticationError && err.status === 401);
    await assert.rejects(anthropic(K.expired), (err: unknown) =>
      err instanceof Anthropic.AuthenticationError && /expired/i.test(err.message));
    await assert.rejects(anthropic(K.ip10), (err: unknown) => err instanceof Anthropic.PermissionDeniedError && err.status === 403);
    assert.equal((await anthropic(TOKEN)).content[0].type, "text");

    const gemini = (key: string) => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gw.url } })
      .models.generateContent({ model: "gemini-2.5-flash", contents: "hi" });
    await assert.rejects(gemini("sk-gw-unknown-0000000000"), (err: unknown) =>
      (err as { status?: number }).status === 401 && /UNAUTHENTICATED/.test((err as Error).message));
    await assert.rejects(gemini(K.carols), (err: unknown) =>
      (err as { status?: number }).status === 403 && /PERMISSION_DENIED/.test((err as Error).message));
    assert.match((await gemini(TOKEN)).text ?? "", /says/);
  });

  test("only authenticated requests reached the upstream, never with a client token", () => {
    assert.equal(fake.received.length, 6); // 2 messages + 2 generate-content + 2 SDK calls
    for (const r of fake.received) {
      assert.equal(r.headers.authorization, `Bearer ${CHANNEL_KEY}`);
      assert.equal(r.headers["x-api-key"], undefined);
      assert.equal(r.headers["x-goog-api-key"], undefined);
    }
  });
});

describe("IPv6 client address", () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;

  before(async () => {
    fake = await startFakeOpenAI({ keys: [CHANNEL_KEY] });
    gw = await startTestGateway(yaml({ listen: "[::1]:0" })(fake.url));
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
    destroyAgents();
  });

  test("a client on ::1 matches an IPv6 rule and not an IPv4 one", async () => {
    assert.match(gw.url, /^http:\/\/\[::1\]:\d+$/);
    assert.equal((await postChat(gw.url, hello, bearer(K.ipLoop6))).status, 200);
    const r = await postChat(gw.url, hello, bearer(K.ip127));
    assertOpenAIError(r, 403, "ip_not_allowed");
    assertOpenAIError(await postChat(gw.url, hello, bearer(K.ip6)), 403, "ip_not_allowed");
  });
});

describe("dual-stack listener: IPv4 clients arrive as IPv4-mapped IPv6", () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;

  before(async () => {
    fake = await startFakeOpenAI({ keys: [CHANNEL_KEY] });
    gw = await startTestGateway(yaml({ listen: "[::]:0" })(fake.url));
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
    destroyAgents();
  });

  test("::ffff:127.0.0.1 matches an IPv4 rule", async () => {
    const v4 = `http://127.0.0.1:${gw.port}`;
    assert.equal((await postChat(v4, hello, bearer(K.ip127))).status, 200);
    assertOpenAIError(await postChat(v4, hello, bearer(K.ip10)), 403, "ip_not_allowed");
    assertOpenAIError(await postChat(v4, hello, bearer(K.ipLoop6)), 403, "ip_not_allowed");
    const v6 = `http://[::1]:${gw.port}`;
    assert.equal((await postChat(v6, hello, bearer(K.ipLoop6))).status, 200);
    assertOpenAIError(await postChat(v6, hello, bearer(K.ip127)), 403, "ip_not_allowed");
  });
});
