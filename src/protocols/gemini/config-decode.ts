// A client's `generationConfig` → canonical sampling, limits, output format and reasoning.
// The field policy's table (field-policy.ts) screens each key first: Gemini-only hints
// (routing, media resolution…) are dropped, what would change the answer and has no
// counterpart elsewhere (logprobs, audio/image output, speech…) is a 400 naming the field.

import type { CanonicalRequest, Reasoning, ReasoningEffort } from "../canonical.js";
import { dropUnknownKeys, screenKeys } from "../field-policy.js";
import { effortOf } from "../reasoning.js";
import { jsonSchemaOf } from "./mapping.js";
import { array, integer, invalid, number, object, setKeys, string, type JsonObject } from "./wire.js";

/** A canonical request under construction. */
export type Draft = { -readonly [K in keyof CanonicalRequest]?: CanonicalRequest[K] };

const FIELD = "generationConfig";
const THINKING_KEYS = new Set(["thinkingBudget", "thinkingLevel", "includeThoughts"]);
const LEVELS: Record<string, ReasoningEffort> = { MINIMAL: "minimal", LOW: "low", MEDIUM: "medium", HIGH: "high" };

/** Decodes `generationConfig` into canonical fields. */
export function decodeGenerationConfig(gc: JsonObject, dropped: string[] = []): Draft {
  screenKeys("generate-content", gc, { path: FIELD, where: FIELD }, dropped);
  const out: Draft = {};
  let mime: string | undefined;
  let schema: unknown;
  for (const key of setKeys(gc)) {
    const v = gc[key];
    const field = `${FIELD}.${key}`;
    switch (key) {
      case "maxOutputTokens": out.maxTokens = integer(v, field, 1); break;
      case "temperature": out.temperature = number(v, field); break;
      case "topP": out.topP = number(v, field); break;
      case "topK": out.topK = integer(v, field, 1); break;
      case "presencePenalty": out.presencePenalty = number(v, field); break;
      case "frequencyPenalty": out.frequencyPenalty = number(v, field); break;
      case "seed": out.seed = integer(v, field, Number.MIN_SAFE_INTEGER); break;
      case "candidateCount": integer(v, field, 1); break; // above 1 is refused by the screen
      case "stopSequences": out.stop = array(v, field).map((s, i) => string(s, `${field}[${i}]`)); break;
      case "responseMimeType": mime = string(v, field); break;
      case "responseSchema": schema = jsonSchemaOf(object(v, field)); break;
      case "responseJsonSchema": schema = object(v, field); break;
      case "thinkingConfig": {
        const reasoning = decodeThinking(object(v, field), dropped);
        if (reasoning) out.reasoning = reasoning;
        break;
      }
      default:
        // Screened: a dropped hint, or a refusable field at its neutral value (TEXT output,
        // responseLogprobs false, one candidate).
        break;
    }
  }
  if (gc.responseSchema != null && gc.responseJsonSchema != null) {
    throw invalid(`${FIELD}.responseJsonSchema`, "cannot be combined with responseSchema");
  }
  if (mime === "application/json") {
    out.responseFormat = schema === undefined ? {} : { schema: schema as Record<string, unknown> };
  } else if (mime !== undefined && mime !== "text/plain") {
    throw invalid(`${FIELD}.responseMimeType`, 'only "text/plain" and "application/json" can be converted');
  } else if (schema !== undefined) {
    throw invalid(`${FIELD}.${gc.responseSchema != null ? "responseSchema" : "responseJsonSchema"}`, 'needs responseMimeType "application/json"');
  }
  return out;
}

/**
 * `thinkingConfig` as canonical reasoning. thinkingBudget 0 turns thinking off (no
 * reasoning); -1 (dynamic) and a bare includeThoughts: true ask for medium effort; a
 * positive budget carries both the budget and its effort; thinkingLevel maps by name.
 * includeThoughts itself is not carried: whether thoughts come back is up to the target
 * (a Gemini client's SDK leaves thought parts out of `response.text` either way).
 */
function decodeThinking(t: JsonObject, dropped: string[]): Reasoning | undefined {
  const field = `${FIELD}.thinkingConfig`;
  dropUnknownKeys(t, THINKING_KEYS, field, dropped);
  if (t.thinkingLevel != null) {
    const level = LEVELS[string(t.thinkingLevel, `${field}.thinkingLevel`).toUpperCase()];
    if (level === undefined) throw invalid(`${field}.thinkingLevel`, "must be MINIMAL, LOW, MEDIUM or HIGH");
    return { effort: level };
  }
  if (t.thinkingBudget != null) {
    const budget = integer(t.thinkingBudget, `${field}.thinkingBudget`, -1);
    if (budget === 0) return undefined;
    if (budget === -1) return { effort: "medium" };
    return { budgetTokens: budget, effort: effortOf(budget) };
  }
  return t.includeThoughts === true ? { effort: "medium" } : undefined;
}
