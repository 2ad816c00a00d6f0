// Reads the fields of a buffered multipart/form-data body with busboy: routing needs the
// `model` field, which clients may send after the file. Files are only measured; the body
// itself is forwarded upstream as received.

import busboy from "busboy";
import { errors } from "../errors/catalogue.js";
import { GatewayError } from "../errors/gateway-error.js";

export interface MultipartFile {
  readonly field: string;
  readonly filename: string;
  readonly mimeType: string;
  readonly size: number;
}

export interface MultipartParts {
  readonly fields: Record<string, string>;
  readonly files: readonly MultipartFile[];
}

const limits = { fields: 64, fieldSize: 1024 * 1024, files: 16, parts: 100 };

/** Parses the fields (and file sizes) of a multipart body; 400 when it is malformed. */
export function parseMultipart(body: Buffer, contentType: string): Promise<MultipartParts> {
  return new Promise((resolve, reject) => {
    const bad = (why: string) => reject(new GatewayError(errors.invalidParameter, `The multipart body is malformed: ${why}.`));
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: { "content-type": contentType }, limits });
    } catch (err) {
      bad((err as Error).message);
      return;
    }
    const fields: Record<string, string> = {};
    const files: MultipartFile[] = [];
    parser.on("field", (name, value, info) => {
      if (info.valueTruncated) return bad(`field '${name}' is too long`);
      fields[name] = value;
    });
    parser.on("file", (field, stream, info) => {
      let size = 0;
      stream.on("data", (chunk: Buffer) => { size += chunk.length; });
      stream.on("end", () => files.push({ field, filename: info.filename ?? "", mimeType: info.mimeType, size }));
    });
    parser.on("partsLimit", () => bad("too many parts"));
    parser.on("filesLimit", () => bad("too many files"));
    parser.on("fieldsLimit", () => bad("too many fields"));
    parser.on("error", (err: Error) => bad(err.message));
    parser.on("close", () => resolve({ fields, files }));
    parser.end(body);
  });
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
