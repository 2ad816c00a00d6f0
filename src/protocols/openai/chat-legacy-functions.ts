// Chat-completions' legacy function calling (`functions`, `function_call`, `role: "function"`),
// read one to one as tools: a function is a function tool, function_call is tool_choice, an
// assistant's function_call is a tool call and a function message its result. The legacy
// shape has no call ids, so a call's id is made from its message's position (the same
// history gives the same ids on every turn) and a result answers the latest open call of
// its function's name.

import type { Tool, ToolChoice, ToolResultBlock, ToolUseBlock } from "../canonical.js";
import { invalid, isObject, onlyKnown, parseArguments } from "./chat-common.js";

const functionKeys = new Set(["name", "description", "parameters"]);
const callKeys = new Set(["name", "arguments"]);
const choiceKeys = new Set(["name"]);

/** `functions` → function tools (undefined when absent). */
export function decodeFunctions(v: unknown, dropped: string[]): Tool[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw invalid("functions must be an array.");
  return v.map((fn: unknown, i): Tool => {
    const at = `functions[${i}]`;
    if (!isObject(fn) || typeof fn.name !== "string" || fn.name === "") throw invalid(`${at}.name must be a non-empty string.`);
    onlyKnown(fn, functionKeys, at, dropped);
    if (fn.description !== undefined && fn.description !== null && typeof fn.description !== "string") {
      throw invalid(`${at}.description must be a string.`);
    }
    if (fn.parameters !== undefined && fn.parameters !== null && !isObject(fn.parameters)) {
      throw invalid(`${at}.parameters must be a JSON Schema object.`);
    }
    const parameters = isObject(fn.parameters) ? fn.parameters : { type: "object", properties: {} };
    return typeof fn.description === "string" ? { name: fn.name, description: fn.description, parameters } : { name: fn.name, parameters };
  });
}

/** `function_call` → tool choice (undefined when absent). */
export function decodeFunctionCall(v: unknown, dropped: string[]): ToolChoice | undefined {
  if (v === undefined || v === null) return undefined;
  if (v === "auto" || v === "none") return { type: v };
  if (isObject(v) && typeof v.name === "string" && v.name !== "") {
    onlyKnown(v, choiceKeys, "function_call", dropped);
    return { type: "tool", name: v.name };
  }
  throw invalid('function_call must be "auto", "none" or {"name":…}.');
}

/** Pairs the legacy calls of one conversation with their results. One per request. */
export class LegacyCalls {
  /** Function name → ids of its calls not answered yet, oldest first. */
  readonly #open = new Map<string, string[]>();
  /** Where the unknown keys of a legacy call are named (dropped, as everywhere). */
  readonly #dropped: string[];

  constructor(dropped: string[]) {
    this.#dropped = dropped;
  }

  /** An assistant message's `function_call` (message `index` of the client's list). */
  call(fc: unknown, index: number): ToolUseBlock {
    const at = `messages[${index}].function_call`;
    if (!isObject(fc) || typeof fc.name !== "string" || fc.name === "") throw invalid(`${at}.name must be a non-empty string.`);
    onlyKnown(fc, callKeys, at, this.#dropped);
    const input = parseArguments(typeof fc.arguments === "string" ? fc.arguments : "");
    if (!input) throw invalid(`${at}.arguments must be a JSON object.`);
    const id = `call_fn${index}`;
    const open = this.#open.get(fc.name);
    if (open) open.push(id);
    else this.#open.set(fc.name, [id]);
    return { type: "tool_use", id, name: fc.name, input };
  }

  /** A `role: "function"` message's result, answering the latest open call of its name. */
  result(m: Record<string, unknown>, index: number, content: ToolResultBlock["content"]): ToolResultBlock {
    const where = `messages[${index}]`;
    if (typeof m.name !== "string" || m.name === "") throw invalid(`${where}.name must name the function whose result this is.`);
    const id = this.#open.get(m.name)?.pop();
    if (id === undefined) throw invalid(`${where} is a result of function "${m.name}", but no earlier assistant message calls it (function_call) without a result.`);
    return { type: "tool_result", toolUseId: id, name: m.name, content };
  }
}
