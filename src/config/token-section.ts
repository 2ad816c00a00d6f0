// A fast reader for the top-level `tokens:` list, the one section that grows to 100k
// entries. The general YAML parser spends ~1 µs per byte building a positioned document;
// token entries are nearly always flat mappings of plain or simply quoted scalars and
// one-line flow lists, which this reads line by line into the same values `yaml` would
// produce (YAML 1.2 core schema). Anything outside that subset (anchors, tags, block
// scalars, multi-line values, nested blocks, tabs, CR, escapes) makes it give up, and the
// caller parses the whole file the ordinary way.

/** The tokens section cut out of the source: its values and the source with it blanked. */
export interface TokenSection {
  /** The list's entries, as `doc.toJS()` would give them (env references still masked). */
  tokens: Record<string, unknown>[];
  /** The source without the section's body (`tokens:` left empty); offsets before it hold. */
  rest: string;
  /** Offset of the `tokens` key in the source. */
  keyOffset: number;
}

/** Thrown inside the reader when the section leaves the subset; never escapes. */
class Unsupported extends Error {}
const give = (): never => {
  throw new Unsupported();
};

/** CR, tabs, control characters and BOMs: the full parser's business. */
// eslint-disable-next-line no-control-regex
const unusual = /[\u0000-\u0009\u000b-\u001f\u007f\ufeff]/;
const sectionKey = /^tokens:[ ]*(?:#.*)?$/;
const identifier = /^[A-Za-z_][A-Za-z0-9_]*$/;
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
  if (decimalInt.test(text)) return parseInt(text, 10);
  if (decimalFloat.test(text)) return parseFloat(text);
  if (indicators.has(text[0]) || otherNumber.test(text)) give();
  if (nullWord.test(text)) return null;
  if (boolWord.test(text)) return text[0] === "t" || text[0] === "T";
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

/** `[a, "b", c]` on one line, from `start` (the `[`); only scalars, no trailing comma. */
function flowList(line: string, start: number): unknown[] {
  const items: unknown[] = [];
  let at = start + 1;
  const skipSpaces = (): void => {
    while (line[at] === " ") at++;
  };
  skipSpaces();
  if (line[at] === "]") {
    if (!restIsBlank(line, at + 1)) give();
    return items;
  }
  for (;;) {
    skipSpaces();
    if (line[at] === '"' || line[at] === "'") {
      const q = quoted(line, at);
      items.push(q.value);
      at = q.end;
    } else {
      let end = at;
      while (end < line.length && !",[]{}".includes(line[end])) end++;
      const text = line.slice(at, end).replace(trailingSpaces, "");
      // `:` and `#` change meaning inside flow collections; leave them to the full parser.
      if (text.includes(":") || text.includes("#")) give();
      items.push(plainValue(text));
      at = end;
    }
    skipSpaces();
    if (line[at] === ",") {
      at++;
      skipSpaces();
      if (line[at] === "]") give();
      continue;
    }
    if (line[at] !== "]" || !restIsBlank(line, at + 1)) give();
    return items;
  }
}

/** The value after `key: ` on one line. */
function blockValue(line: string, start: number): unknown {
  const first = line[start];
  if (first === "[") return flowList(line, start);
  if (first === '"' || first === "'") {
    const q = quoted(line, start);
    if (!restIsBlank(line, q.end)) give();
    return q.value;
  }
  let text = line.slice(start);
  const comment = text.search(/ #/);
  if (comment >= 0) text = text.slice(0, comment);
  text = text.replace(trailingSpaces, "");
  if (text.includes(": ") || text.endsWith(":") || text.includes(" #")) give();
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

/** Reads the lines of the section's body (after `tokens:`). */
function readEntries(lines: string[]): Record<string, unknown>[] {
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
      column = indentOf(line.slice(indent + 1)) + indent + 1;
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

/**
 * Cuts the top-level `tokens:` block list out of (masked) config text and reads it, or
 * returns undefined when the file does not fit the subset. The caller must check that the
 * rest still parses with an empty `tokens` key at `keyOffset`.
 */
export function readTokenSection(text: string): TokenSection | undefined {
  if (unusual.test(text)) return undefined;
  const lines = text.split("\n");
  let keyLine = -1;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    // Document markers and directives: more than one document, or settings we do not read.
    if (line.startsWith("---") || line.startsWith("...") || line.startsWith("%")) return undefined;
    if (!line.startsWith("tokens")) continue;
    if (keyLine >= 0 || !sectionKey.test(line)) return undefined;
    keyLine = i;
  }
  if (keyLine < 0) return undefined;
  // The body: every line up to the next one at column 0 that is neither a list item,
  // a comment nor blank.
  let end = keyLine + 1;
  while (end < lines.length) {
    const line = lines[end];
    if (line !== "" && line[0] !== " " && line[0] !== "#" && !(line[0] === "-" && (line.length === 1 || line[1] === " "))) break;
    end++;
  }
  const body = lines.slice(keyLine + 1, end);
  let tokens: Record<string, unknown>[];
  try {
    tokens = readEntries(body);
  } catch (error) {
    if (error instanceof Unsupported) return undefined;
    throw error;
  }
  let keyOffset = 0;
  for (let i = 0; i < keyLine; i++) keyOffset += lines[i].length + 1;
  const rest = [...lines.slice(0, keyLine + 1), ...lines.slice(end)].join("\n");
  return { tokens, rest, keyOffset };
}
