// docs/clients.md: every recorded client (test/fixtures/clients/<dir>/, its version from
// clients.json beside them), the route each of its requests takes to each channel protocol
// as test/integration/client-fixtures.test.ts replays it (the plan in
// test/helpers/client-routes.ts), and what its recordings exercise, read from the bodies.
// Also the fixtures README's table of clients, from the same manifest.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CLIENT_FIXTURES_DIR, fixtureDirs, isStream, isTokenCount, protocolOf, readAllFixtures, type Fixture } from "../../test/helpers/client-fixture-files.js";
import {
  FIRST_PARTY_TARGETS, KIND_TARGETS, replayedFlipped, routeOf, tokenCountRouteOf, type ClientProtocol, type Target,
} from "../../test/helpers/client-routes.js";

/** One client's entry in test/fixtures/clients/clients.json. */
export interface ClientEntry {
  /** Short name for docs/clients.md. */
  readonly name: string;
  /** The client and how it was configured, as the fixtures README's table says it. */
  readonly client: string;
  readonly version: string;
  /** The day it was recorded (YYYY-MM-DD). */
  readonly recorded: string;
  /** The API it spoke, as recorded. */
  readonly how: string;
}

export type ClientManifest = Readonly<Record<string, ClientEntry>>;

export function readClientManifest(dir = CLIENT_FIXTURES_DIR): ClientManifest {
  return JSON.parse(readFileSync(join(dir, "clients.json"), "utf8")) as ClientManifest;
}

/** Fixture directories without a manifest entry, and entries without a directory. */
export function manifestGaps(dir = CLIENT_FIXTURES_DIR): { unlisted: string[]; stale: string[] } {
  const dirs = fixtureDirs(dir);
  const listed = Object.keys(readClientManifest(dir));
  return { unlisted: dirs.filter((d) => !listed.includes(d)), stale: listed.filter((d) => !dirs.includes(d)) };
}

type Json = Record<string, any>;

/** What one client's recordings exercise, each with the fields that show it. */
export interface Exercised {
  readonly text: boolean;
  readonly stream: boolean;
  readonly json: boolean;
  readonly tools: boolean;
  readonly toolResults: boolean;
  readonly reasoning: readonly string[];
  readonly images: readonly string[];
  readonly caching: readonly string[];
  readonly hostedTools: readonly string[];
  readonly other: readonly string[];
}

/** Every object inside a JSON value, itself included. */
function* objectsIn(value: unknown): Generator<Json> {
  if (Array.isArray(value)) for (const v of value) yield* objectsIn(v);
  else if (value !== null && typeof value === "object") {
    yield value as Json;
    for (const v of Object.values(value)) yield* objectsIn(v);
  }
}

const TOOL_RESULT = /"role":"tool"|"type":"tool_result"|"functionResponse"|"type":"function_call_output"/;
const REASONING_BLOCKS = new Set(["thinking", "redacted_thinking", "reasoning"]);
const IMAGE_BLOCKS = new Set(["image", "image_url", "input_image"]);
const CACHE_KEYS = ["cache_control", "prompt_cache_key", "prompt_cache_breakpoint", "prompt_cache_retention", "cachedContent"];

/** Reasoning fields of a request: top-level switches and thinking blocks in the history. */
function reasoningIn(body: Json): string[] {
  const found: string[] = [];
  for (const key of ["thinking", "reasoning", "reasoning_effort"]) if (body[key] !== undefined) found.push(key);
  if (body.output_config?.effort !== undefined) found.push("output_config.effort");
  if (body.generationConfig?.thinkingConfig !== undefined) found.push("thinkingConfig");
  if (Array.isArray(body.include) && body.include.some((i: unknown) => String(i).startsWith("reasoning."))) found.push("include: reasoning.encrypted_content");
  for (const o of objectsIn([body.messages, body.input, body.contents])) {
    if (REASONING_BLOCKS.has(o.type)) found.push(`${o.type} blocks`);
    if (o.thoughtSignature !== undefined) found.push("thoughtSignature");
    if (o.thought === true) found.push("thought parts");
  }
  return found;
}

function imagesIn(body: Json): string[] {
  const found: string[] = [];
  for (const o of objectsIn(body)) {
    if (IMAGE_BLOCKS.has(o.type)) found.push(o.type);
    for (const key of ["inlineData", "fileData"]) if (String(o[key]?.mimeType ?? "").startsWith("image/")) found.push(key);
  }
  return found;
}

function cachingIn(body: Json): string[] {
  const found: string[] = [];
  for (const o of objectsIn(body)) for (const key of CACHE_KEYS) if (o[key] !== undefined) found.push(key);
  return found;
}

/** Tools the provider runs itself (no schema the client executes). */
function hostedToolsIn(proto: ClientProtocol, body: Json): string[] {
  const tools: Json[] = Array.isArray(body.tools) ? body.tools : [];
  switch (proto) {
    case "messages": return tools.filter((t) => t.input_schema === undefined).map((t) => String(t.type ?? t.name));
    case "chat": return [...tools.filter((t) => t.type !== "function").map((t) => String(t.type)), ...(body.web_search_options ? ["web_search_options"] : [])];
    case "responses": return tools.filter((t) => !["function", "namespace", "custom"].includes(t.type)).map((t) => String(t.type));
    case "generate": return tools.flatMap((t) => Object.keys(t).filter((k) => k !== "functionDeclarations"));
  }
}

/** Whether the answer the client accepted held text (not only a tool call): a `text` field
 * (messages blocks and deltas, responses output_text, Gemini parts) or a chat `content`
 * string; tool-call arguments stream under other keys. */
function answeredText(f: Fixture): boolean {
  for (const o of objectsIn([f.answered.body, f.answered.events])) {
    for (const key of ["text", "content"]) if (typeof o[key] === "string" && o[key].trim() !== "") return true;
  }
  return false;
}

const unique = (xs: string[]) => [...new Set(xs)].sort();

/** What the recordings `fixtures` (one client's) exercise. */
export function exercised(fixtures: readonly Fixture[]): Exercised {
  const models = fixtures.filter((f) => protocolOf(f) !== undefined);
  const bodies = models.map((f) => [protocolOf(f)!, f.body] as const);
  return {
    text: models.some(answeredText),
    stream: models.some((f) => isStream(f)),
    json: models.some((f) => !isStream(f)),
    tools: bodies.some(([, b]) => Array.isArray(b.tools) && b.tools.length > 0),
    toolResults: bodies.some(([, b]) => TOOL_RESULT.test(JSON.stringify(b))),
    reasoning: unique(bodies.flatMap(([, b]) => reasoningIn(b))),
    images: unique(bodies.flatMap(([, b]) => imagesIn(b))),
    caching: unique(bodies.flatMap(([, b]) => cachingIn(b))),
    hostedTools: unique(bodies.flatMap(([p, b]) => hostedToolsIn(p, b))),
    other: unique(fixtures.filter((f) => protocolOf(f) === undefined).map((f) => `\`${f.method} ${f.path}\``)),
  };
}

const PROTOCOL_NAME: Record<ClientProtocol, string> = {
  chat: "chat completions (`/v1/chat/completions`)",
  messages: "messages (`/v1/messages`)",
  responses: "responses (`/v1/responses`)",
  generate: "generate content (`/v1beta/models/…:generateContent`)",
};

const TARGET_NAME: Record<Target, string> = {
  openai: "openai chat channel",
  anthropic: "anthropic channel",
  gemini: "gemini channel",
  responses: "openai responses channel",
  bedrock: "bedrock (Claude)",
  "vertex-claude": "vertex Claude",
  "vertex-gemini": "vertex Gemini",
  "azure-openai": "azure-openai (chat)",
  deepseek: "openai-compatible deepseek",
};

const PROTOCOL_ORDER: readonly ClientProtocol[] = ["chat", "messages", "responses", "generate"];

const yes = (b: boolean) => (b ? "yes" : "—");
const fields = (xs: readonly string[]) => (xs.length ? xs.map((x) => (x.startsWith("`") ? x : `\`${x}\``)).join(", ") : "—");
const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`;

const INTRO = `# Clients the gateway is tested with

Generated by \`npm run docs\` from the recorded client requests in
[\`test/fixtures/clients/\`](../test/fixtures/clients/README.md) (versions from its
\`clients.json\`); \`test/unit/docs-generated.test.ts\` fails when this file is stale. Every
request a client was recorded sending is replayed, as recorded but for the model name, by
\`test/integration/client-fixtures.test.ts\` through a real gateway to a model on each channel
protocol, and the answer is read back with the client's own SDK parser. A request whose
protocol is the channel's own is passed through (its body goes upstream untouched but for the
model); any other pair is converted.
`;

/** docs/clients.md, rendered from the fixtures in `dir`. */
export function renderClientMatrix(dir = CLIENT_FIXTURES_DIR): string {
  const manifest = readClientManifest(dir);
  const all = readAllFixtures(dir);
  const clients = fixtureDirs(dir).map((d) => {
    const fixtures = all.filter((f) => f.name.startsWith(`${d}/`));
    const protocols = PROTOCOL_ORDER.filter((p) => fixtures.some((f) => protocolOf(f) === p));
    return { dir: d, entry: manifest[d], fixtures, protocols };
  });
  const nameOf = (c: (typeof clients)[number]) => `${c.entry?.name ?? c.dir} (\`${c.dir}/\`)`;
  const out: string[] = [INTRO];

  out.push("## Clients and versions\n");
  out.push("| client | version | recorded | speaks | requests recorded |", "|---|---|---|---|---|");
  for (const c of clients) {
    const speaks = c.protocols.map((p) => PROTOCOL_NAME[p]).join(", ") || "—";
    const version = c.entry?.version || "not in clients.json";
    out.push(`| ${nameOf(c)} | ${version} | ${c.entry?.recorded ?? "—"} | ${speaks} | ${c.fixtures.length} |`);
  }

  out.push("", "## Routes\n");
  out.push("Each cell: how that client's requests of that protocol reach a model on that channel, and how many");
  out.push("replays the test makes of them. Recordings made streamed only (the CLIs) are replayed as JSON too.\n");
  const rows = clients.map((c) => ({ ...c, name: nameOf(c) }));
  routesTable(out, rows, FIRST_PARTY_TARGETS);
  out.push("", "On the provider kinds ([providers.md](providers.md)), the same replays with the same answers, each");
  out.push("through a test front that speaks the kind's wire (signatures, URLs, event-stream frames):\n");
  routesTable(out, rows, KIND_TARGETS);

  out.push("", "## What the recordings exercise\n");
  out.push("Read from the recorded bodies: a text answer the client accepted, streamed and JSON requests,");
  out.push("function tools offered and tool results sent back, and the fields that ask for reasoning, carry");
  out.push("images, give cache hints, or offer tools the provider runs itself (hosted tools).\n");
  out.push("| client | text | stream | JSON | tools | tool results | reasoning | images | caching | hosted tools | other requests |");
  out.push("|---|---|---|---|---|---|---|---|---|---|---|");
  for (const c of clients) {
    const x = exercised(c.fixtures);
    out.push(`| ${nameOf(c)} | ${yes(x.text)} | ${yes(x.stream)} | ${yes(x.json)} | ${yes(x.tools)} | ${yes(x.toolResults)} | ${fields(x.reasoning)} | ${fields(x.images)} | ${fields(x.caching)} | ${fields(x.hostedTools)} | ${fields(x.other)} |`);
  }

  out.push("", "The Vercel AI SDK also runs its own two-step tool loop (`generateText` and `streamText`) against");
  out.push("the gateway in that test, for each provider flavour and each channel above.\n");
  return out.join("\n");
}

/** The routes table of `targets`: one row per client and protocol it speaks, and its token counts. */
function routesTable(
  out: string[], clients: readonly { dir: string; fixtures: readonly Fixture[]; protocols: readonly ClientProtocol[]; name: string }[],
  targets: readonly Target[],
): void {
  out.push(`| client | speaks | ${targets.map((t) => TARGET_NAME[t]).join(" | ")} |`, `|---|---|${targets.map(() => "---|").join("")}`);
  for (const c of clients) {
    for (const p of c.protocols) {
      const replays = c.fixtures.filter((f) => protocolOf(f) === p).length * (replayedFlipped(c.dir) ? 2 : 1);
      out.push(`| ${c.name} | ${p} | ${targets.map((t) => `${routeOf(p, t)}, ${plural(replays, "replay")}`).join(" | ")} |`);
    }
    const counts = c.fixtures.filter(isTokenCount).length;
    if (counts > 0) out.push(`| ${c.name} | token count | ${targets.map((t) => `${tokenCountRouteOf(t)}, ${plural(counts, "replay")}`).join(" | ")} |`);
  }
}

const TABLE_START = "<!-- clients table: generated by npm run docs from clients.json -->";
const TABLE_END = "<!-- end of clients table -->";

/** The fixtures README with its table of clients rendered from the manifest. */
export function renderFixturesReadme(readme: string, dir = CLIENT_FIXTURES_DIR): string {
  const start = readme.indexOf(TABLE_START);
  const end = readme.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error(`test/fixtures/clients/README.md lacks the ${TABLE_START} … ${TABLE_END} markers`);
  const rows = Object.entries(readClientManifest(dir)).map(([d, e]) => `| \`${d}/\` | ${e.client} | ${e.version} | ${e.how} |`);
  const table = ["| dir | client | version | API it spoke |", "|---|---|---|---|", ...rows].join("\n");
  return `${readme.slice(0, start)}${TABLE_START}\n${table}\n${readme.slice(end)}`;
}
