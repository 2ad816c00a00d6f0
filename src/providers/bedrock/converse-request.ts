// An Anthropic Messages body as Bedrock's Converse takes it, for the models that are not
// Claude. What converts: system (text blocks), messages (text, base64 images, base64 PDF
// and plain-text documents, tool_use, tool_result), max_tokens / temperature / top_p /
// stop_sequences as inferenceConfig, custom tools and tool_choice as toolConfig. Every
// other field is dropped, having no Converse counterpart: top_k (each model names it its
// own way), thinking, metadata, service_tier, output_config, cache_control marks, … (and
// the blocks `contentBlock` skips). A turn left empty goes, and turns of one role that
// then meet are joined, as Converse wants them alternating.

type Json = Record<string, unknown>;

/** Image formats Converse takes, by media type. */
const IMAGE_FORMATS: Readonly<Record<string, string>> = Object.freeze({
  "image/png": "png", "image/jpeg": "jpeg", "image/jpg": "jpeg", "image/gif": "gif", "image/webp": "webp",
});

function isObject(v: unknown): v is Json {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Numbers documents get their names from (Converse wants one on each). */
interface Naming {
  documents: number;
}

/** A base64 image block as Converse's `image`; another source (a URL: Converse fetches
 * only from S3) is dropped. */
function image(source: unknown): Json | undefined {
  if (!isObject(source) || source.type !== "base64" || typeof source.data !== "string") return undefined;
  const format = IMAGE_FORMATS[String(source.media_type).toLowerCase()];
  return format ? { image: { format, source: { bytes: source.data } } } : undefined;
}

/** A document's name as Converse allows it (letters, digits, spaces, hyphens, brackets). */
function documentName(title: unknown, naming: Naming): string {
  naming.documents++;
  const cleaned = typeof title === "string" ? title.replace(/[^A-Za-z0-9 \-()[\]]+/g, " ").replace(/\s+/g, " ").trim() : "";
  return `${cleaned || "document"} ${naming.documents}`.slice(0, 200);
}

/** A base64 PDF or plain-text document as Converse's `document`; other sources dropped. */
function document(block: Json, naming: Naming): Json | undefined {
  const source = block.source;
  if (!isObject(source)) return undefined;
  let format: string;
  let bytes: string;
  if (source.type === "base64" && source.media_type === "application/pdf" && typeof source.data === "string") {
    format = "pdf";
    bytes = source.data;
  } else if (source.type === "text" && typeof source.data === "string") {
    format = "txt";
    bytes = Buffer.from(source.data, "utf8").toString("base64");
  } else {
    return undefined;
  }
  return { document: { format, name: documentName(block.title, naming), source: { bytes } } };
}

/** A tool result's content: its text, image and document blocks. */
function toolResultContent(content: unknown, naming: Naming): Json[] {
  if (typeof content === "string") return content === "" ? [] : [{ text: content }];
  if (!Array.isArray(content)) return [];
  return content.flatMap((b): Json[] => {
    if (!isObject(b)) return [];
    if (b.type === "text" && typeof b.text === "string") return [{ text: b.text }];
    if (b.type === "image") return [image(b.source) ?? []].flat();
    if (b.type === "document") return [document(b, naming) ?? []].flat();
    return [];
  });
}

/** One Anthropic content block as a Converse one; undefined for a block Converse has no
 * place for (thinking and redacted thinking, server-tool blocks, search results, a URL
 * image). cache_control marks are dropped with their blocks' other Anthropic-only fields. */
function contentBlock(b: unknown, naming: Naming): Json | undefined {
  if (!isObject(b)) return undefined;
  switch (b.type) {
    case "text":
      // Converse refuses a blank text block ("The text field … is blank").
      return typeof b.text === "string" && b.text.trim() !== "" ? { text: b.text } : undefined;
    case "image":
      return image(b.source);
    case "document":
      return document(b, naming);
    case "tool_use":
      return { toolUse: { toolUseId: String(b.id ?? ""), name: String(b.name ?? ""), input: isObject(b.input) ? b.input : {} } };
    case "tool_result":
      return {
        toolResult: {
          toolUseId: String(b.tool_use_id ?? ""), content: toolResultContent(b.content, naming),
          ...(b.is_error === true && { status: "error" }),
        },
      };
    default:
      return undefined;
  }
}

/** Turns as Converse takes them: content as blocks, empty turns gone, neighbours of one
 * role joined (tool results first in a user turn, as the calls they answer come first). */
function messages(raw: unknown, naming: Naming): Json[] {
  const out: { role: string; content: Json[] }[] = [];
  for (const m of Array.isArray(raw) ? raw : []) {
    if (!isObject(m) || (m.role !== "user" && m.role !== "assistant")) continue;
    const blocks = typeof m.content === "string" ? [{ type: "text", text: m.content }] : Array.isArray(m.content) ? m.content : [];
    const content = blocks.map((b) => contentBlock(b, naming)).filter((b): b is Json => b !== undefined);
    if (content.length === 0) continue;
    const last = out.at(-1);
    if (last && last.role === m.role) {
      const merged = [...last.content, ...content];
      last.content = m.role === "user" ? [...merged.filter((b) => "toolResult" in b), ...merged.filter((b) => !("toolResult" in b))] : merged;
    } else {
      out.push({ role: m.role, content });
    }
  }
  return out;
}

/** The system prompt as Converse's text blocks. */
function system(raw: unknown): Json[] {
  if (typeof raw === "string") return raw.trim() === "" ? [] : [{ text: raw }];
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((b) => (isObject(b) && b.type === "text" && typeof b.text === "string" && b.text.trim() !== "" ? [{ text: b.text }] : []));
}

/** Custom tools as toolSpecs; Anthropic's server tools (web search, bash, the text editor:
 * a `type` other than "custom") run only on Anthropic's side, and are dropped. */
function toolSpecs(raw: unknown): Json[] {
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((t) => {
    if (!isObject(t) || (t.type !== undefined && t.type !== "custom") || typeof t.name !== "string") return [];
    const schema = isObject(t.input_schema) ? t.input_schema : { type: "object", properties: {} };
    const spec: Json = { name: t.name, inputSchema: { json: schema } };
    if (typeof t.description === "string" && t.description !== "") spec.description = t.description;
    return [{ toolSpec: spec }];
  });
}

/** tool_choice as Converse's; undefined for auto's default or a choice it does not have.
 * disable_parallel_tool_use has no counterpart and is dropped. */
function toolChoice(raw: unknown): Json | undefined {
  if (!isObject(raw)) return undefined;
  if (raw.type === "any") return { any: {} };
  if (raw.type === "tool" && typeof raw.name === "string") return { tool: { name: raw.name } };
  if (raw.type === "auto") return { auto: {} };
  return undefined;
}

/** Whether turns carry tool calls or results (Converse then needs the tools declared). */
function usesTools(turns: readonly Json[]): boolean {
  return turns.some((m) => (m.content as Json[]).some((b) => "toolUse" in b || "toolResult" in b));
}

/** The toolConfig for the request, or undefined. tool_choice none: no tools are offered,
 * unless earlier turns hold tool calls (Converse refuses those without the tools), where
 * they are offered with the model's own choice. */
function toolConfig(body: Json, turns: readonly Json[]): Json | undefined {
  const tools = toolSpecs(body.tools);
  if (tools.length === 0) return undefined;
  const none = isObject(body.tool_choice) && body.tool_choice.type === "none";
  if (none && !usesTools(turns)) return undefined;
  const choice = none ? undefined : toolChoice(body.tool_choice);
  return choice ? { tools, toolChoice: choice } : { tools };
}

/** inferenceConfig from the sampling fields, or undefined when none is set. */
function inferenceConfig(body: Json): Json | undefined {
  const config: Json = {};
  if (typeof body.max_tokens === "number") config.maxTokens = body.max_tokens;
  if (typeof body.temperature === "number") config.temperature = body.temperature;
  if (typeof body.top_p === "number") config.topP = body.top_p;
  if (Array.isArray(body.stop_sequences) && body.stop_sequences.length > 0) config.stopSequences = body.stop_sequences;
  return Object.keys(config).length > 0 ? config : undefined;
}

/** The parts of a Converse request made from an Anthropic body. */
export function converseRequest(anthropic: Buffer): Json {
  const body = JSON.parse(anthropic.toString("utf8")) as Json;
  const naming: Naming = { documents: 0 };
  const out: Json = { messages: messages(body.messages, naming) };
  const sys = system(body.system);
  if (sys.length > 0) out.system = sys;
  const inference = inferenceConfig(body);
  if (inference) out.inferenceConfig = inference;
  const tools = toolConfig(body, out.messages as Json[]);
  if (tools) out.toolConfig = tools;
  return out;
}

/** Converse's (and ConverseStream's) body for an Anthropic body. */
export function converseBody(anthropic: Buffer): Buffer {
  return Buffer.from(JSON.stringify(converseRequest(anthropic)));
}
