// Rewrites a multipart/form-data body the gateway must change before it goes upstream (a
// transcript's response_format, the model_map rename). Every part's headers are rebuilt from
// what busboy read (so the provider reads the same fields the gateway judged, whatever the
// client wrote in them); the parts' contents are the client's bytes, sliced, not decoded.
// Memory: one new body the size of the old.

import type { MultipartPart } from "./multipart.js";

const CRLF = Buffer.from("\r\n");
const HEADERS_END = Buffer.from("\r\n\r\n");

/** The body with the text fields in `replace` set (every part of those names dropped, one
 * of each added at the end), and its Content-Type; undefined when the body's parts do not
 * line up with `order` (busboy's reading of the same body): the caller refuses it. */
export function rewriteMultipart(
  body: Buffer, contentType: string, order: readonly MultipartPart[], replace: Readonly<Record<string, string>>,
): { body: Buffer; contentType: string } | undefined {
  const boundary = boundaryOf(contentType);
  if (boundary === undefined) return undefined;
  const contents = partContents(body, boundary);
  if (contents === undefined || contents.length !== order.length) return undefined;
  const out: Buffer[] = [];
  const open = `--${boundary}\r\n`;
  order.forEach((part, i) => {
    if (Object.hasOwn(replace, part.field)) return;
    out.push(headerBytes(open + dispositionOf(part) + "\r\n\r\n"), contents[i], CRLF);
  });
  for (const [name, value] of Object.entries(replace)) {
    out.push(headerBytes(`${open}Content-Disposition: form-data; name="${quoted(name)}"\r\n\r\n`), Buffer.from(value), CRLF);
  }
  out.push(Buffer.from(`--${boundary}--\r\n`));
  const param = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(boundary) ? boundary : `"${boundary}"`;
  return { body: Buffer.concat(out), contentType: `multipart/form-data; boundary=${param}` };
}

/** The boundary parameter of a multipart Content-Type. */
function boundaryOf(contentType: string): string | undefined {
  const m = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const b = m?.[1] ?? m?.[2];
  return b !== undefined && /^[\x21-\x7e ]{1,70}$/.test(b) ? b : undefined;
}

/** The content of each part (between its blank line and the next delimiter), found as
 * busboy finds them; undefined for a body that is not laid out that way. */
function partContents(body: Buffer, boundary: string): Buffer[] | undefined {
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  // The first delimiter may open the body without its CRLF.
  let pos = body.subarray(0, delimiter.length - 2).equals(delimiter.subarray(2)) ? delimiter.length - 2 : -1;
  if (pos === -1) {
    const at = body.indexOf(delimiter);
    if (at === -1) return undefined;
    pos = at + delimiter.length;
  }
  const contents: Buffer[] = [];
  for (;;) {
    if (body[pos] === 0x2d && body[pos + 1] === 0x2d) return contents; // the closing delimiter
    if (body[pos] !== 0x0d || body[pos + 1] !== 0x0a) return undefined;
    const headersEnd = body.indexOf(HEADERS_END, pos);
    if (headersEnd === -1) return undefined;
    const start = headersEnd + HEADERS_END.length;
    const next = body.indexOf(delimiter, start);
    if (next === -1 || body.indexOf(delimiter, pos + 2) < start) return undefined;
    contents.push(body.subarray(start, next));
    pos = next + delimiter.length;
  }
}

/** A part's headers as busboy read them. */
function dispositionOf(part: MultipartPart): string {
  const name = `Content-Disposition: form-data; name="${quoted(part.field)}"`;
  if (!part.file) return name;
  const filename = part.file.filename === undefined ? "" : `; filename="${quoted(part.file.filename)}"`;
  return `${name}${filename}\r\nContent-Type: ${part.file.mimeType.replace(/[\r\n]/g, "")}`;
}

/** A header parameter value as a quoted string busboy reads back the same (backslash
 * escapes); a line break, which no header may hold, as browsers write it. */
function quoted(value: string): string {
  return value.replace(/[\\"]/g, "\\$&").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
}

/** Header text as bytes: latin-1 (busboy read the parameters so, by default: the client's
 * bytes come back unchanged) unless it holds wider characters (a decoded `filename*`). */
function headerBytes(text: string): Buffer {
  return Buffer.from(text, /[^\x00-\xff]/.test(text) ? "utf8" : "latin1");
}
