// A fast reader for the two top-level sections that grow to 100k entries: the `tokens:`
// list and the `users:` map. The general YAML parser spends 1–2 µs per byte building a
// positioned document; their entries are nearly always flat mappings (block or one-line
// flow) of plain or simply quoted scalars and one-line flow lists, which this reads line
// by line into the same values `yaml` would produce (YAML 1.2 core schema). A section
// outside that subset (anchors, tags, block scalars, multi-line values, deeper nesting,
// escapes) is left in the text for the parser; tabs, CR or document markers anywhere make
// the reader leave the whole file to it.

/** The sections read, and the source with their bodies cut out. */
export interface LargeSections {
  /** Values by top-level key, as `doc.toJS()` would give them (env references still masked). */
  values: Map<"tokens" | "users", unknown>;
  /** The source without the sections' bodies: each key is left with no value. */
  rest: string;
  /** Offset of each emptied key in `rest`. */
  keyOffsets: Map<"tokens" | "users", number>;
  /** Where each body was in the source, in source order: [start, end) offsets. */
  cuts: { key: "tokens" | "users"; bodyStart: number; end: number }[];
}

/** Thrown inside the reader when the section leaves the subset; never escapes. */
class Unsupported extends Error {}
const give = (): never => {
  throw new Unsupported();
};

/** CR, tabs, control characters and BOMs: the full parser's business. */
// eslint-disable-next-line no-control-regex
const unusual = /[\u0000-\u0009\u000b-\u001f\u007f\ufeff]/;
const documentMarker = /^(?:---|\.\.\.|%)/m;
/** A line at column 0 that ends the list: not blank, a comment or an item. */
const sectionEnd = /^(?:[^ #\n-]|-[^ \n])/;
/** Setting keys the reader takes (`__proto__` would set an object's prototype). */
const identifier = /^(?!__proto__:?$)[A-Za-z_][A-Za-z0-9_]*$/;
/** User names the reader takes: the schema's names without `:`. */
const userName = /^[A-Za-z0-9][A-Za-z0-9._@-]*$/;
const nullWord = /^(?:~|[Nn]ull|NULL)$/;
const boolWord = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
const decimalInt = /^[-+]?[0-9]+$/;
const decimalFloat = /^[-+]?(?:(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+|\.[0-9]+|[0-9]+\.[0-9]*)$/;
/** Plain scalars the core schema may read as something other than a string or decimal. */
const otherNumber = /^(?:0o|0x|[-+]?\.)/;
/** Only spaces end a plain scalar: YAML keeps other white space (NBSP, U+2028) in it. */
const trailingSpaces = / +$/;
/** Characters that may not start a plain scalar (or start one only in some contexts). */
const indicators = new Set([..."-?:,[]{}#&*!|>'\"%@`"]);

/** A plain scalar's value under the core schema (octal, hex, inf and nan give up). */
function plainValue(text: string): unknown {
  if (text === "") give();
  const first = text[0];
  // The regular expressions run only for the first characters they can match (speed).
  if ((first >= "0" && first <= "9") || first === "-" || first === "+" || first === ".") {
    if (decimalInt.test(text)) return parseInt(text, 10);
    if (decimalFloat.test(text)) return parseFloat(text);
    if (otherNumber.test(text)) give();
  }
  if (indicators.has(first)) give();
  if ("~nNtTfF".includes(first)) {
    if (nullWord.test(text)) return null;
    if (boolWord.test(text)) return first === "t" || first === "T";
  }
  return text;
}

/** A quoted scalar starting at `start` of `line`: its value and the offset after it. */
function quoted(line: string, start: number): { value: string; end: number } {
  const quote = line[start];
  if (quote === '"') {
    const close = line.indexOf('"', start + 1);
    if (close < 0) give();
    const value = line.slice(start + 1, close);
    if (value.includes("\\")) give();
    return { value, end: close + 1 };
  }
  let value = "";
  let at = start + 1;
  for (;;) {
    const close = line.indexOf("'", at);
    if (close < 0) give();
    value += line.slice(at, close);
    if (line[close + 1] !== "'") return { value, end: close + 1 };
    value += "'";
    at = close + 2;
  }
}

/** True when only spaces, or spaces then a comment, follow `from`. */
function restIsBlank(line: string, from: number): boolean {
  const rest = line.slice(from);
  return /^[ ]*$/.test(rest) || /^[ ]+#/.test(rest);
}

function skipSpaces(line: string, at: number): number {
  while (line[at] === " ") at++;
  return at;
}

/** A scalar inside a flow collection, from `at`: its value and the offset after it. */
function flowScalar(line: string, at: number): { value: unknown; end: number } {
  if (line[at] === '"' || line[at] === "'") return quoted(line, at);
  let end = at;
  while (end < line.length && !",[]{}".includes(line[end])) end++;
  const text = line.slice(at, end).replace(trailingSpaces, "");
  // `:` and `#` change meaning inside flow collections; leave them to the full parser.
  if (text.includes(":") || text.includes("#")) give();
  return { value: plainValue(text), end };
}

/** `[a, "b", c]` from `start` (the `[`): only scalars, no trailing comma. */
function flowList(line: string, start: number): { value: unknown[]; end: number } {
  const items: unknown[] = [];
  let at = skipSpaces(line, start + 1);
  if (line[at] === "]") return { value: items, end: at + 1 };
  for (;;) {
    const item = flowScalar(line, skipSpaces(line, at));
    items.push(item.value);
    at = skipSpaces(line, item.end);
    if (line[at] === "]") return { value: items, end: at + 1 };
    if (line[at] !== ",") give();
    at = skipSpaces(line, at + 1);
    if (line[at] === "]") give();
  }
}

/** `{a: 1, b: [x, y]}` from `start` (the `{`): scalar or list values, no trailing comma. */
function flowMap(line: string, start: number): { value: Record<string, unknown>; end: number } {
  const entry: Record<string, unknown> = {};
  let at = skipSpaces(line, start + 1);
  if (line[at] === "}") return { value: entry, end: at + 1 };
  for (;;) {
    const colon = line.indexOf(":", at);
    if (colon < 0) give();
    const key = line.slice(at, colon);
    if (!identifier.test(key) || Object.hasOwn(entry, key) || line[colon + 1] !== " ") give();
    at = skipSpaces(line, colon + 1);
    const value = line[at] === "[" ? flowList(line, at) : flowScalar(line, at);
    entry[key] = value.value;
    at = skipSpaces(line, value.end);
    if (line[at] === "}") return { value: entry, end: at + 1 };
    if (line[at] !== ",") give();
    at = skipSpaces(line, at + 1);
    if (line[at] === "}") give();
  }
}

/** The value after `key: ` on one line. */
function blockValue(line: string, start: number): unknown {
  const first = line[start];
  if (first === "[" || first === "{" || first === '"' || first === "'") {
    const read = first === "[" ? flowList(line, start) : first === "{" ? flowMap(line, start) : quoted(line, start);
    if (!restIsBlank(line, read.end)) give();
    return read.value;
  }
  const comment = line.indexOf(" #", start);
  let text = comment >= 0 ? line.slice(start, comment) : line.slice(start);
  if (text.endsWith(" ")) text = text.replace(trailingSpaces, "");
  if (text.includes(": ") || text.endsWith(":")) give();
  return plainValue(text);
}

/** Reads `key: value` at `column` of `line` into `entry`. */
function readPair(line: string, column: number, entry: Record<string, unknown>): void {
  const colon = line.indexOf(":", column);
  if (colon < 0) give();
  const key = line.slice(column, colon);
  if (!identifier.test(key) || Object.hasOwn(entry, key)) give();
  if (line[colon + 1] !== " ") give(); // `key:` alone opens a nested block
  let start = colon + 1;
  while (line[start] === " ") start++;
  if (start >= line.length || line[start] === "#") give();
  entry[key] = blockValue(line, start);
}

function indentOf(line: string): number {
  let i = 0;
  while (line[i] === " ") i++;
  return i;
}

/** Reads the body of a list of mappings (`tokens:`). */
function readList(lines: string[]): Record<string, unknown>[] {
  const entries: Record<string, unknown>[] = [];
  let dash = -1; // the list's indentation
  let column = -1; // the current entry's key column
  let entry: Record<string, unknown> | undefined;
  for (const line of lines) {
    const indent = indentOf(line);
    if (indent === line.length || line[indent] === "#") continue; // blank or comment
    if (dash < 0) dash = indent;
    if (indent === dash && line[indent] === "-") {
      if (line[indent + 1] !== " ") give();
      column = skipSpaces(line, indent + 1);
      if (line[column] === "{") {
        const read = flowMap(line, column);
        if (!restIsBlank(line, read.end)) give();
        entries.push(read.value);
        entry = undefined; // nothing may follow a flow entry at a deeper indent
        continue;
      }
      entry = {};
      entries.push(entry);
      readPair(line, column, entry);
    } else if (entry && indent === column) {
      readPair(line, column, entry);
    } else {
      give();
    }
  }
  if (entries.length === 0) give();
  return entries;
}

/** Reads the body of a mapping of names to mappings (`users:`), block or flow. */
function readNamedMaps(lines: string[]): Record<string, unknown> {
  const named: Record<string, unknown> = {};
  let nameIndent = -1;
  let column = -1; // the current nested block's key column
  let entry: Record<string, unknown> | undefined;
  for (const line of lines) {
    const indent = indentOf(line);
    if (indent === line.length || line[indent] === "#") continue; // blank or comment
    if (nameIndent < 0) nameIndent = indent;
    if (indent === nameIndent) {
      const colon = line.indexOf(":", indent);
      const name = line.slice(indent, colon);
      if (colon < 0 || !userName.test(name) || plainValue(name) !== name || Object.hasOwn(named, name)) give();
      entry = undefined;
      column = -1;
      const start = skipSpaces(line, colon + 1);
      if (start < line.length && line[start] !== "#") {
        if (line[colon + 1] !== " ") give();
        named[name] = blockValue(line, start);
      } else {
        entry = {};
        named[name] = entry;
      }
    } else if (entry && indent > nameIndent && (column < 0 || indent === column)) {
      column = indent;
      readPair(line, column, entry);
    } else {
      give();
    }
  }
  // `name:` with nothing under it is null to YAML; leave that to the parser.
  for (const value of Object.values(named)) if (value !== null && typeof value === "object" && Object.keys(value).length === 0 && !Array.isArray(value)) give();
  if (Object.keys(named).length === 0) give();
  return named;
}

const readers = { tokens: readList, users: readNamedMaps } as const;
type SectionKey = keyof typeof readers;

interface Cut {
  key: SectionKey;
  keyOffset: number;
  bodyStart: number;
  end: number;
  value: unknown;
}

/** Finds and reads one section; undefined when it is absent, repeated or unreadable. */
function cutSection(text: string, key: SectionKey): Cut | undefined {
  const keys = [...text.matchAll(new RegExp(`^${key}.*$`, "gm"))];
  if (keys.length !== 1 || !new RegExp(`^${key}:[ ]*(?:#.*)?$`).test(keys[0][0])) return undefined;
  const keyOffset = keys[0].index;
  const bodyStart = keyOffset + keys[0][0].length + 1;
  // The body: every line up to the next one at column 0 that is neither a list item,
  // a comment nor blank.
  const next = new RegExp(sectionEnd.source, "gm");
  next.lastIndex = bodyStart;
  const end = next.exec(text)?.index ?? text.length;
  if (bodyStart >= end) return undefined;
  try {
    return { key, keyOffset, bodyStart, end, value: readers[key](text.slice(bodyStart, end).split("\n")) };
  } catch (error) {
    if (error instanceof Unsupported) return undefined;
    throw error;
  }
}

/**
 * Cuts the top-level `tokens:` list and `users:` map out of (masked) config text and reads
 * them, or returns undefined when neither fits the subset. The caller must check that the
 * rest parses with each cut key present once, empty, at its offset.
 */
export function readLargeSections(text: string): LargeSections | undefined {
  if (unusual.test(text) || documentMarker.test(text)) return undefined;
  const cuts = (Object.keys(readers) as SectionKey[])
    .map((key) => cutSection(text, key))
    .filter((cut): cut is Cut => cut !== undefined)
    .sort((a, b) => a.keyOffset - b.keyOffset);
  if (cuts.length === 0) return undefined;
  const values = new Map<SectionKey, unknown>();
  const keyOffsets = new Map<SectionKey, number>();
  let rest = "";
  let from = 0;
  for (const cut of cuts) {
    keyOffsets.set(cut.key, rest.length + cut.keyOffset - from);
    rest += text.slice(from, cut.bodyStart);
    from = cut.end;
    values.set(cut.key, cut.value);
  }
  rest += text.slice(from);
  return { values, rest, keyOffsets, cuts: cuts.map(({ key, bodyStart, end }) => ({ key, bodyStart, end })) };
}

/**
 * Source ranges [start, end) of the entries of a section this reader took: by index for
 * the tokens list, by name for the users map. Used only to locate problems.
 */
export function entryRanges(text: string, cut: LargeSections["cuts"][number]): Map<string | number, [number, number]> {
  const ranges = new Map<string | number, [number, number]>();
  let entryIndent = -1;
  let previous: { id: string | number; start: number } | undefined;
  let at = cut.bodyStart;
  while (at < cut.end) {
    const newline = text.indexOf("\n", at);
    const lineEnd = newline < 0 || newline > cut.end ? cut.end : newline;
    const line = text.slice(at, lineEnd);
    const indent = indentOf(line);
    if (indent < line.length && line[indent] !== "#") {
      if (entryIndent < 0) entryIndent = indent;
      if (indent === entryIndent) {
        if (previous) ranges.set(previous.id, [previous.start, at]);
        const id = cut.key === "tokens" ? ranges.size : line.slice(indent, line.indexOf(":", indent));
        previous = { id, start: at };
      }
    }
    at = lineEnd + 1;
  }
  if (previous) ranges.set(previous.id, [previous.start, cut.end]);
  return ranges;
}
