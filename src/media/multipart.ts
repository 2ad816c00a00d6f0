// Reads the fields of a multipart/form-data body with busboy as its bytes arrive: routing
// needs the `model` field, which clients may send after the file. Files are only measured;
// the body itself is forwarded upstream as received.

import busboy from "busboy";
import { errors } from "../errors/catalogue.js";
import { GatewayError } from "../errors/gateway-error.js";

export interface MultipartFile {
  readonly field: string;
  readonly filename: string;
  readonly mimeType: string;
  readonly size: number;
}

/** One part as busboy read it, in the body's order: what a rewrite rebuilds its headers from. */
export interface MultipartPart {
  readonly field: string;
  /** A file part's name and type (busboy's reading; a file may have no filename). */
  readonly file?: { readonly filename: string | undefined; readonly mimeType: string };
}

export interface MultipartParts {
  readonly fields: Record<string, string>;
  readonly files: readonly MultipartFile[];
  /** Every part busboy kept, fields and files, in the order of the body. */
  readonly order: readonly MultipartPart[];
}

const limits = { fields: 64, fieldSize: 1024 * 1024, files: 16, parts: 100 };
/** The text fields' values together: they are held beside the body, whose copy they are. */
const MAX_FIELDS_CHARS = 1024 * 1024;

/**
 * One body's parse: `write` each chunk as it arrives, then `end`; `parts` settles once the
 * parser is done, rejecting with a 400 when the body is malformed (cut short, no closing
 * boundary, a part without headers, too many parts). Every stream busboy emits has an error
 * listener: an unheard 'error' would end the process, not the request.
 */
export class MultipartReader {
  readonly parts: Promise<MultipartParts>;
  #parser: busboy.Busboy | undefined;
  #failed = false;
  #settle!: { resolve: (p: MultipartParts) => void; reject: (e: GatewayError) => void };

  constructor(contentType: string) {
    this.parts = new Promise((resolve, reject) => { this.#settle = { resolve, reject }; });
    // Marked handled now: a body can turn out malformed before the caller awaits `parts`
    // (it reads the rest of the body first), and an unhandled rejection ends the process.
    this.parts.catch(() => {});
    try {
      this.#parser = busboy({ headers: { "content-type": contentType }, limits });
    } catch (err) {
      this.#fail((err as Error).message);
      return;
    }
    this.#listen(this.#parser);
  }

  /** Feeds the next chunk of the body (ignored once the body is known to be malformed). */
  write(chunk: Buffer): void {
    if (this.#failed) return;
    try {
      this.#parser!.write(chunk);
    } catch (err) {
      this.#fail((err as Error).message);
    }
  }

  /** The body is complete. */
  end(): void {
    if (this.#failed) return;
    try {
      this.#parser!.end();
    } catch (err) {
      this.#fail((err as Error).message);
    }
  }

  #listen(parser: busboy.Busboy): void {
    const fields: Record<string, string> = {};
    const files: MultipartFile[] = [];
    let fieldChars = 0;
    const order: MultipartPart[] = [];
    parser.on("field", (name, value, info) => {
      if (info.valueTruncated) return this.#fail(`field '${name}' is too long`);
      fieldChars += value.length;
      if (fieldChars > MAX_FIELDS_CHARS) return this.#fail(`its text fields are longer than ${MAX_FIELDS_CHARS} characters together`);
      fields[name] = value;
      order.push({ field: name });
    });
    parser.on("file", (field, stream, info) => {
      order.push({ field, file: { filename: info.filename, mimeType: info.mimeType } });
      let size = 0;
      stream.on("data", (chunk: Buffer) => { size += chunk.length; });
      stream.on("end", () => files.push({ field, filename: info.filename ?? "", mimeType: info.mimeType, size }));
      stream.on("error", (err: Error) => this.#fail(err.message));
    });
    parser.on("partsLimit", () => this.#fail("too many parts"));
    parser.on("filesLimit", () => this.#fail("too many files"));
    parser.on("fieldsLimit", () => this.#fail("too many fields"));
    parser.on("error", (err: Error) => this.#fail(err.message));
    parser.on("close", () => { if (!this.#failed) this.#settle.resolve({ fields, files, order }); });
  }

  #fail(why: string): void {
    if (this.#failed) return;
    this.#failed = true;
    this.#settle.reject(new GatewayError(errors.invalidParameter, `The multipart body is malformed: ${why}.`));
  }
}

/** Parses the fields (and file sizes) of a whole multipart body; 400 when it is malformed. */
export function parseMultipart(body: Buffer, contentType: string): Promise<MultipartParts> {
  const reader = new MultipartReader(contentType);
  reader.write(body);
  reader.end();
  return reader.parts;
}

/**
 * The multipart body with the value of text field `name` replaced (model_map renames the
 * model inside an upload); the body unchanged when the field is absent or already equal.
 */
export function replaceField(body: Buffer, contentType: string, name: string, value: string): Buffer {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  if (!boundary) return body;
  const marker = Buffer.from(`name="${name}"`);
  const at = body.indexOf(marker);
  if (at === -1) return body;
  const start = body.indexOf("\r\n\r\n", at);
  const end = body.indexOf(`\r\n--${boundary[1] ?? boundary[2]}`, start);
  if (start === -1 || end === -1) return body;
  if (body.toString("utf8", start + 4, end) === value) return body;
  return Buffer.concat([body.subarray(0, start + 4), Buffer.from(value), body.subarray(end)]);
}
