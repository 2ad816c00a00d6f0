// Writes new prices into gateway.yaml's text, touching only what changes: the Document
// API finds each node and its place in the source, and the edit replaces that value,
// deletes that line or adds a line beside its siblings. Comments, blank lines, alignment
// and flow or block style stay as the operator wrote them everywhere else.

import { isMap, isScalar, parseDocument, type Document, type Node, type Pair, type YAMLMap } from "yaml";
import { maskReferences } from "../config/env.js";
import { flatten, priceValueOf } from "./diff.js";
import { Num, type PriceObject, type PriceValue } from "./price-keys.js";

/** A model whose price is set (or which is added whole). */
export interface PriceEdit {
  readonly model: string;
  /** The price it gets; for an added model, the whole model. */
  readonly value: PriceObject;
  readonly added: boolean;
}

/** gateway.yaml that cannot be edited as asked (its shape is not what the import expects). */
export class EditError extends Error {}

/** One replacement of source text; an insertion has start === end. */
interface Splice {
  readonly start: number;
  readonly end: number;
  readonly text: string;
  readonly order: number;
}

const plainKey = /^[A-Za-z0-9_][A-Za-z0-9_.\/-]*$/;
/** Strings written plain (`endpoint: chat`); others are quoted (`size: "1024x1024"`). */
const plainWord = /^[A-Za-z][A-Za-z0-9_-]*$/;
const yamlWords = /^(true|false|null|yes|no|on|off|y|n)$/i;

function keyText(key: string): string {
  return plainKey.test(key) ? key : JSON.stringify(key);
}

/** A price value in flow style: `{ input: 3, tiers: [{ above_input_tokens: 200000, input: 6 }] }`. */
export function flowText(value: PriceValue): string {
  if (value instanceof Num) return value.text;
  if (typeof value === "string") return plainWord.test(value) && !yamlWords.test(value) ? value : JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(flowText).join(", ")}]`;
  const pairs = Object.entries(value).map(([k, v]) => `${keyText(k)}: ${flowText(v)}`);
  return pairs.length ? `{ ${pairs.join(", ")} }` : "{}";
}

function same(a: PriceValue, b: PriceValue): boolean {
  const wrap = (v: PriceValue) => [...flatten({ v })].join("\n");
  return wrap(a) === wrap(b);
}

function lineStart(text: string, at: number): number {
  return text.lastIndexOf("\n", at - 1) + 1;
}

/** The position after the end of the line on which a node ends. */
function afterLine(text: string, node: Node | null | undefined, fallback: number): number {
  const end = node?.range ? node.range[1] : fallback;
  if (end > 0 && text[end - 1] === "\n") return end;
  const newline = text.indexOf("\n", end);
  return newline === -1 ? text.length : newline + 1;
}

function range(node: unknown, what: string): [number, number, number] {
  const r = (node as Node | null)?.range;
  if (!r) throw new EditError(`${what} has no place in the source`);
  return r;
}

/** Edits that make the map `map` (a price, or models) hold `next` for the keys in `keys`. */
class MapEditor {
  private readonly pairs: Pair[];
  constructor(
    private readonly text: string,
    private readonly map: YAMLMap,
    private readonly what: string,
    private readonly splices: Splice[],
  ) {
    this.pairs = map.items as Pair[];
  }

  private push(start: number, end: number, text: string): void {
    this.splices.push({ start, end, text, order: this.splices.length });
  }

  private keyOf(pair: Pair): string {
    return isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
  }

  find(key: string): Pair | undefined {
    return this.pairs.find((p) => this.keyOf(p) === key);
  }

  /** Replaces a pair's value: a scalar in place, anything else as flow after the key. */
  replace(pair: Pair, value: PriceValue): void {
    const v = pair.value as Node | null;
    if (isScalar(v) && (value instanceof Num || typeof value === "string")) {
      const [start, end] = range(v, `${this.what}.${this.keyOf(pair)}`);
      this.push(start, end, flowText(value));
      return;
    }
    const keyEnd = range(pair.key, `${this.what}.${this.keyOf(pair)}`)[1];
    const end = v?.range ? v.range[1] : keyEnd;
    // A block value ends after its last line break; the flow text keeps the line's end.
    const valueEnd = this.text[end - 1] === "\n" ? end - 1 : end;
    this.push(keyEnd, valueEnd, `: ${flowText(value)}`);
  }

  remove(pair: Pair): void {
    const index = this.pairs.indexOf(pair);
    const keyStart = range(pair.key, this.what)[0];
    if (this.map.flow) {
      const valueEnd = range(pair.value ?? pair.key, this.what)[1];
      if (index > 0) this.push(range(this.pairs[index - 1].value ?? this.pairs[index - 1].key, this.what)[1], valueEnd, "");
      else if (this.pairs.length > 1) this.push(keyStart, range(this.pairs[1].key, this.what)[0], "");
      else this.push(keyStart, valueEnd, "");
      return;
    }
    this.push(lineStart(this.text, keyStart), afterLine(this.text, pair.value as Node | null, range(pair.key, this.what)[1]), "");
  }

  /** Adds `key: value` after the last pair (block: a line of its own at the keys' indent). */
  add(key: string, value: string, block?: string): void {
    const last = this.pairs[this.pairs.length - 1];
    if (!last) throw new EditError(`${this.what} is empty`);
    if (this.map.flow) {
      this.push(range(last.value ?? last.key, this.what)[1], range(last.value ?? last.key, this.what)[1], `, ${keyText(key)}: ${value}`);
      return;
    }
    const first = range(this.pairs[0].key, this.what)[0];
    const indent = " ".repeat(first - lineStart(this.text, first));
    const at = afterLine(this.text, last.value as Node | null, range(last.key, this.what)[1]);
    const newline = at > 0 && this.text[at - 1] !== "\n" ? "\n" : "";
    this.push(at, at, `${newline}${block ? block.replace(/^(?=.)/gm, indent) : `${indent}${keyText(key)}: ${value}`}\n`);
  }
}

function mapAt(doc: Document, path: readonly string[], what: string): YAMLMap {
  const node = doc.getIn(path, true);
  if (!isMap(node)) throw new EditError(`${what} is not a mapping`);
  return node;
}

/** Edits of one existing model's price: each differing key replaced, added or removed. */
function editPrice(text: string, doc: Document, edit: PriceEdit, splices: Splice[]): void {
  const what = `models.${edit.model}.price`;
  const map = mapAt(doc, ["models", edit.model, "price"], what);
  const editor = new MapEditor(text, map, what, splices);
  if (map.items.length === 0) {
    const [start, end] = range(map, what);
    splices.push({ start, end, text: flowText(edit.value), order: splices.length });
    return;
  }
  for (const [key, value] of Object.entries(edit.value)) {
    const pair = editor.find(key);
    if (!pair) editor.add(key, flowText(value));
    else if (!same(priceOf(pair), value)) editor.replace(pair, value);
  }
  for (const pair of map.items as Pair[]) {
    const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
    if (!(key in edit.value)) editor.remove(pair);
  }
}

function priceOf(pair: Pair): PriceValue {
  return priceValueOf((pair.value as Node | null)?.toJSON());
}

/** A new model as block lines: its key, then each field (the price in flow style). */
function modelBlock(name: string, body: PriceObject, spaced: boolean): string {
  const fields = Object.entries(body).map(([k, v]) => `  ${k}: ${flowText(v)}`);
  return `${spaced ? "\n" : ""}${keyText(name)}:\n${fields.join("\n")}`;
}

/** `text` (gateway.yaml) with the edits made; throws EditError when its shape does not allow them. */
export function applyPriceEdits(text: string, edits: readonly PriceEdit[]): string {
  // Same-length masks keep every position, so ranges found on the masked text hold here.
  const doc = parseDocument(maskReferences(text).text, { uniqueKeys: true });
  if (doc.errors.length) throw new EditError(doc.errors[0].message);
  const splices: Splice[] = [];
  const added = edits.filter((e) => e.added);
  for (const edit of edits) if (!edit.added) editPrice(text, doc, edit, splices);
  if (added.length) {
    const models = doc.get("models", true);
    if (models === undefined) {
      const block = added.map((e) => modelBlock(e.model, e.value, false).replace(/^(?=.)/gm, "  ")).join("\n");
      splices.push({ start: text.length, end: text.length, text: `${text.endsWith("\n") ? "" : "\n"}models:\n${block}\n`, order: splices.length });
    } else {
      const map = mapAt(doc, ["models"], "models");
      const editor = new MapEditor(text, map, "models", splices);
      // New models are spaced like the existing ones: a blank line between them or none.
      const spaced = /\n[ \t]*\n/.test(text.slice(...modelsSpan(map)));
      for (const edit of added) editor.add(edit.model, flowText(edit.value), map.flow ? undefined : modelBlock(edit.model, edit.value, spaced));
    }
  }
  return splice(text, splices);
}

/** From the first model's key to the second's: where the file's spacing of models shows. */
function modelsSpan(map: YAMLMap): [number, number] {
  const [a, b] = map.items as Pair[];
  if (!a || !b) return [0, 0];
  return [range(a.key, "models")[0], range(b.key, "models")[0]];
}

function splice(text: string, splices: readonly Splice[]): string {
  const ordered = [...splices].sort((a, b) => b.start - a.start || b.order - a.order);
  let out = text;
  let limit = Infinity;
  for (const s of ordered) {
    if (s.end > limit) throw new EditError("overlapping edits");
    out = out.slice(0, s.start) + s.text + out.slice(s.end);
    limit = s.start;
  }
  return out;
}
