// GET /quickstart: what the customer's token can call, and how. The models its group has a
// channel for (within the token's own model allowlist), and for each wire protocol
// (chat-completions, responses, messages, generate-content) the models it serves there and
// the exact snippets of the official SDKs and curl. The base URL is the page's own origin:
// the snippets hold `{base_url}` for the page to fill in, and read the key from the
// GATEWAY_API_KEY environment variable: no key is ever in them.

import { compileNameMatcher } from "../../../config/matchers.js";
import type { Endpoint, NameMatcher, Runtime } from "../../../runtime/types.js";
import { knownParams } from "./input.js";
import { meRoute, type Customer, type MeDeps } from "./route.js";

/** The placeholder the page replaces with its origin (no trailing slash). */
export const BASE_URL_PLACEHOLDER = "{base_url}";
/** Where the snippets read the key from. */
export const KEY_VARIABLE = "GATEWAY_API_KEY";

/** A wire protocol the quick start shows: the price-list endpoint its models need, and its
 * snippets for a model. */
interface ProtocolGuide {
  readonly protocol: "chat-completions" | "responses" | "messages" | "generate-content";
  readonly endpoint: Endpoint;
  readonly path: (model: string) => string;
  readonly snippets: (model: string) => Readonly<Record<"curl" | "python" | "javascript", string>>;
}

const B = BASE_URL_PLACEHOLDER;
const K = KEY_VARIABLE;
/** A string literal for JavaScript and Python alike (JSON's escapes are both's). */
const lit = (text: string): string => JSON.stringify(text);
/** A JSON body inside single quotes for the shell. */
const shellJson = (value: unknown): string => `'${JSON.stringify(value).replace(/'/g, "'\\''")}'`;

const guides: readonly ProtocolGuide[] = [
  {
    protocol: "chat-completions", endpoint: "chat", path: () => "/v1/chat/completions",
    snippets: (model) => ({
      curl: `curl ${B}/v1/chat/completions \\\n  -H "Authorization: Bearer $${K}" \\\n  -H "Content-Type: application/json" \\\n  -d ${shellJson({ model, messages: [{ role: "user", content: "Hello" }] })}`,
      python: `import os\nfrom openai import OpenAI\n\nclient = OpenAI(base_url="${B}/v1", api_key=os.environ["${K}"])\nanswer = client.chat.completions.create(\n    model=${lit(model)},\n    messages=[{"role": "user", "content": "Hello"}],\n)\nprint(answer.choices[0].message.content)`,
      javascript: `import OpenAI from "openai";\n\nconst client = new OpenAI({ baseURL: "${B}/v1", apiKey: process.env.${K} });\nconst answer = await client.chat.completions.create({\n  model: ${lit(model)},\n  messages: [{ role: "user", content: "Hello" }],\n});\nconsole.log(answer.choices[0].message.content);`,
    }),
  },
  {
    protocol: "responses", endpoint: "responses", path: () => "/v1/responses",
    snippets: (model) => ({
      curl: `curl ${B}/v1/responses \\\n  -H "Authorization: Bearer $${K}" \\\n  -H "Content-Type: application/json" \\\n  -d ${shellJson({ model, input: "Hello" })}`,
      python: `import os\nfrom openai import OpenAI\n\nclient = OpenAI(base_url="${B}/v1", api_key=os.environ["${K}"])\nanswer = client.responses.create(model=${lit(model)}, input="Hello")\nprint(answer.output_text)`,
      javascript: `import OpenAI from "openai";\n\nconst client = new OpenAI({ baseURL: "${B}/v1", apiKey: process.env.${K} });\nconst answer = await client.responses.create({ model: ${lit(model)}, input: "Hello" });\nconsole.log(answer.output_text);`,
    }),
  },
  {
    protocol: "messages", endpoint: "chat", path: () => "/v1/messages",
    snippets: (model) => ({
      curl: `curl ${B}/v1/messages \\\n  -H "x-api-key: $${K}" \\\n  -H "anthropic-version: 2023-06-01" \\\n  -H "Content-Type: application/json" \\\n  -d ${shellJson({ model, max_tokens: 1024, messages: [{ role: "user", content: "Hello" }] })}`,
      python: `import os\nfrom anthropic import Anthropic\n\nclient = Anthropic(base_url="${B}", api_key=os.environ["${K}"])\nanswer = client.messages.create(\n    model=${lit(model)},\n    max_tokens=1024,\n    messages=[{"role": "user", "content": "Hello"}],\n)\nprint(answer.content[0].text)`,
      javascript: `import Anthropic from "@anthropic-ai/sdk";\n\nconst client = new Anthropic({ baseURL: "${B}", apiKey: process.env.${K} });\nconst answer = await client.messages.create({\n  model: ${lit(model)},\n  max_tokens: 1024,\n  messages: [{ role: "user", content: "Hello" }],\n});\nconsole.log(answer.content[0].text);`,
    }),
  },
  {
    protocol: "generate-content", endpoint: "chat", path: (model) => `/v1beta/models/${encodeURIComponent(model)}:generateContent`,
    snippets: (model) => ({
      curl: `curl ${B}/v1beta/models/${encodeURIComponent(model)}:generateContent \\\n  -H "x-goog-api-key: $${K}" \\\n  -H "Content-Type: application/json" \\\n  -d ${shellJson({ contents: [{ parts: [{ text: "Hello" }] }] })}`,
      python: `import os\nfrom google import genai\nfrom google.genai import types\n\nclient = genai.Client(api_key=os.environ["${K}"], http_options=types.HttpOptions(base_url="${B}"))\nanswer = client.models.generate_content(model=${lit(model)}, contents="Hello")\nprint(answer.text)`,
      javascript: `import { GoogleGenAI } from "@google/genai";\n\nconst ai = new GoogleGenAI({ apiKey: process.env.${K}, httpOptions: { baseUrl: "${B}" } });\nconst answer = await ai.models.generateContent({ model: ${lit(model)}, contents: "Hello" });\nconsole.log(answer.text);`,
    }),
  },
];

export const quickstartRoute = meRoute("GET", "/quickstart", async ({ customer, query }, deps) => {
  knownParams(query, []);
  const runtime = deps.live();
  const allowed = await modelAllowlist(customer, deps, runtime);
  const served = runtime.candidates.get(customer.group);
  const models = [...(served?.keys() ?? [])].filter((m) => runtime.models.has(m) && allowed(m)).sort();
  const protocols = guides.map((g) => {
    const usable = models.filter((m) => runtime.models.get(m)!.endpoints.has(g.endpoint));
    const example = usable[0];
    return {
      protocol: g.protocol, models: usable,
      ...(example === undefined ? {} : { example_model: example, path: g.path(example), snippets: g.snippets(example) }),
    };
  });
  return {
    status: 200,
    body: {
      group: customer.group,
      base_url_placeholder: BASE_URL_PLACEHOLDER,
      key_variable: KEY_VARIABLE,
      models,
      protocols,
    },
  };
});

/** The token's own model allowlist (gateway.yaml's compiled one, or a stored token's
 * names and globs); every model when it has none. */
async function modelAllowlist(customer: Customer, deps: MeDeps, runtime: Runtime): Promise<NameMatcher> {
  for (const t of runtime.tokensByHash.values()) if (t.name === customer.token) return t.allowModel ?? (() => true);
  const stored = await deps.service.token(customer.token);
  return stored.models === undefined ? () => true : compileNameMatcher(stored.models);
}
