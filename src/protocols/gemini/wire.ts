// Small shared pieces of the generate-content wire: JSON shape checks that fail with a 400
// naming the field, the part shape, and the ids Gemini leaves out.

import { randomBytes } from "node:crypto";
import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";

/** The thought signature Google documents for a model turn that has none ("Thought
 * Signatures" guide): Gemini CLI puts it on function calls; it signs nothing. */
export const SKIP_SIGNATURE = "skip_thought_signature_validator";

/** One generate-content `Part` as this adapter reads and writes it. */
export interface GeminiPart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  fileData?: { fileUri: string; mimeType?: string };
  functionCall?: { id?: string; name: string; args: Record<string, unknown> };
  functionResponse?: {
    id?: string;
    name: string;
    response: Record<string, unknown>;
    parts?: { inlineData?: { mimeType: string; data: string }; fileData?: { fileUri: string; mimeType?: string } }[];
  };
}

/** A generate-content `Content`: one turn. */
export interface GeminiContent {
  role: "user" | "model";
  parts: GeminiPart[];
}

export type JsonObject = Record<string, unknown>;

/** Whether a value is a plain JSON object (not null, not an array). */
export function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A 400 invalid_parameter error naming the field. */
export function invalid(field: string, why: string): GatewayError {
  return new GatewayError(errors.invalidParameter, `Invalid parameter \`${field}\`: ${why}.`);
}

/** A 400 missing_required_parameter error naming the field. */
export function missing(field: string): GatewayError {
  return new GatewayError(errors.missingParameter, `Missing required parameter \`${field}\`.`);
}

/** The value as an object, else a 400 naming the field. */
export function object(v: unknown, field: string): JsonObject {
  if (!isObject(v)) throw invalid(field, "must be an object");
  return v;
}

/** The value as an array, else a 400 naming the field. */
export function array(v: unknown, field: string): unknown[] {
  if (!Array.isArray(v)) throw invalid(field, "must be an array");
  return v;
}

/** The value as a string, else a 400 naming the field. */
export function string(v: unknown, field: string): string {
  if (typeof v !== "string") throw invalid(field, "must be a string");
  return v;
}

/** The value as a finite number, else a 400 naming the field. */
export function number(v: unknown, field: string): number {
  if (typeof v !== "number" || !Number.isFinite(v)) throw invalid(field, "must be a number");
  return v;
}

/** The value as an integer of at least `min`, else a 400 naming the field. */
export function integer(v: unknown, field: string, min: number): number {
  if (!Number.isInteger(v) || (v as number) < min) throw invalid(field, `must be an integer ≥ ${min}`);
  return v as number;
}

/** The keys of an object whose values are set (JSON null counts as unset). */
export function setKeys(o: JsonObject): string[] {
  return Object.keys(o).filter((k) => o[k] !== null && o[k] !== undefined);
}

/** A fresh id in the style of Gemini's `responseId`. */
export function newResponseId(): string {
  return randomBytes(16).toString("base64url");
}

/**
 * Ids for function calls. Gemini may omit `functionCall.id`; canonical tool_use needs one,
 * so calls without an id get `call_<n>` (n counting from 0, deterministic per request or
 * response), and a `functionResponse` without an id is paired with the oldest unanswered
 * call of the same name.
 */
export class CallIds {
  #next = 0;
  readonly #pending = new Map<string, string[]>();

  /** The canonical id of a call. */
  call(id: string | undefined, name: string): string {
    const callId = id ?? `call_${this.#next++}`;
    const queue = this.#pending.get(name) ?? [];
    queue.push(callId);
    this.#pending.set(name, queue);
    return callId;
  }

  /** The canonical id of the call a response answers. */
  result(id: string | undefined, name: string): string {
    const queue = this.#pending.get(name) ?? [];
    if (id !== undefined) {
      const at = queue.indexOf(id);
      if (at >= 0) queue.splice(at, 1);
      return id;
    }
    return queue.shift() ?? `call_${this.#next++}`;
  }
}
