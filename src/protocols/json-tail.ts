// Reads one top-level object out of a JSON body without parsing the rest: usage sits at
// the end of a completion, and parsing a long answer just to read it is wasted work.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN = 0x7b;
const CLOSE = 0x7d;

/**
 * The value of the last `"key": { … }` in a JSON body, parsed; undefined when absent or
 * not an object. A key inside a string value cannot match: its quotes would be escaped.
 */
export function lastObjectField(body: Buffer, key: string): unknown {
  const at = body.lastIndexOf(`"${key}"`);
  if (at === -1) return undefined;
  let i = at + key.length + 2;
  while (i < body.length && body[i] !== OPEN) {
    const c = body[i];
    if (c !== 0x20 && c !== 0x3a && c !== 0x0a && c !== 0x0d && c !== 0x09) return undefined; // only ws and ':'
    i++;
  }
  const start = i;
  let depth = 0;
  let inString = false;
  for (; i < body.length; i++) {
    const c = body[i];
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN) depth++;
    else if (c === CLOSE && --depth === 0) {
      try {
        return JSON.parse(body.toString("utf8", start, i + 1));
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}
