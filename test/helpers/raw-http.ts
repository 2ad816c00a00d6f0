// Raw HTTP/1.1 over a TCP socket, for tests that send what node:http's client will not
// (broken framing, bodies cut short, connections dropped mid-request) and must tell a whole
// answer from a cut one or a connection dropped with no answer at all.

import net from "node:net";

export interface RawSend {
  /** Written one after another, in separate writes. */
  readonly pieces: readonly (Buffer | string)[];
  /** After the last piece: wait for the answer (default), half-close then wait, or drop
   * the connection at once with a reset (no answer is awaited). */
  readonly then?: "wait" | "end" | "reset";
  /** Wait this long after the last piece before `then` (a client that lingers, then leaves). */
  readonly pauseMs?: number;
  /** Give up (outcome `timeout`) after this long; default 10 s. */
  readonly timeoutMs?: number;
}

export type RawOutcome =
  | {
    readonly kind: "answer";
    readonly status: number;
    /** Lower-cased names; the last value wins. */
    readonly headers: Readonly<Record<string, string>>;
    readonly body: Buffer;
    /** Whether the body is whole by its framing (Content-Length, chunked end, or 101). */
    readonly complete: boolean;
  }
  /** The connection closed before a whole response head arrived. */
  | { readonly kind: "dropped"; readonly received: string }
  | { readonly kind: "timeout"; readonly received: string }
  /** `then: "reset"`: we dropped it. */
  | { readonly kind: "reset" };

/** Sends `send.pieces` to 127.0.0.1:`port` and reports the first response: as soon as it is
 * whole by its framing (a 101 as soon as its head arrives; the socket is then closed), or
 * whatever arrived when the connection closed. */
export function rawSend(port: number, send: RawSend): Promise<RawOutcome> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let settled = false;
    const socket = net.connect(port, "127.0.0.1");
    const settle = (outcome: RawOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => settle({ kind: "timeout", received: Buffer.concat(chunks).toString("latin1").slice(0, 300) }),
      send.timeoutMs ?? 10_000);
    socket.on("error", () => settle(parse(Buffer.concat(chunks))));
    socket.on("close", () => settle(parse(Buffer.concat(chunks), true)));
    socket.on("data", (c: Buffer) => {
      chunks.push(c);
      const answer = parse(Buffer.concat(chunks));
      if (answer.kind === "answer" && answer.complete) settle(answer);
    });
    socket.on("connect", async () => {
      for (const piece of send.pieces) {
        if (settled || socket.destroyed) return;
        await new Promise<void>((r) => socket.write(piece, () => r()));
      }
      if (send.pauseMs) await new Promise((r) => setTimeout(r, send.pauseMs));
      if (settled || socket.destroyed) return;
      if (send.then === "reset") {
        socket.resetAndDestroy();
        settle({ kind: "reset" });
      } else if (send.then === "end") {
        socket.end();
      }
    });
  });
}

/** Reads a response head and body from what arrived (after any interim 100 Continue). */
function parse(raw: Buffer, closed = false): RawOutcome {
  while (raw.subarray(0, 13).toString("latin1") === "HTTP/1.1 100 " && raw.indexOf("\r\n\r\n") !== -1) {
    raw = raw.subarray(raw.indexOf("\r\n\r\n") + 4);
  }
  const end = raw.indexOf("\r\n\r\n");
  if (end === -1) return { kind: "dropped", received: raw.toString("latin1").slice(0, 300) };
  const lines = raw.toString("latin1", 0, end).split("\r\n");
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0])?.[1];
  if (!status) return { kind: "dropped", received: raw.toString("latin1").slice(0, 300) };
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const body = raw.subarray(end + 4);
  const delimitedByClose = headers["content-length"] === undefined && !/chunked/i.test(headers["transfer-encoding"] ?? "");
  const complete = isComplete(Number(status), headers, body) || (closed && delimitedByClose);
  return { kind: "answer", status: Number(status), headers, body, complete };
}

function isComplete(status: number, headers: Record<string, string>, body: Buffer): boolean {
  if (status === 101 || status === 204 || status === 304) return true;
  if (headers["content-length"] !== undefined) return body.length >= Number(headers["content-length"]);
  if (/chunked/i.test(headers["transfer-encoding"] ?? "")) return chunkedComplete(body);
  return false; // delimited by the close: whole only once it comes
}

/** Whether a chunked body has arrived up to its last (zero) chunk. */
function chunkedComplete(body: Buffer): boolean {
  let at = 0;
  for (;;) {
    const eol = body.indexOf("\r\n", at);
    if (eol === -1) return false;
    const size = parseInt(body.toString("latin1", at, eol), 16);
    if (Number.isNaN(size)) return false;
    if (size === 0) return body.indexOf("\r\n\r\n", eol) === eol;
    at = eol + 2 + size + 2;
    if (at > body.length) return false;
  }
}

/** A request's bytes: request line, headers (in order, as given) and body. */
export function requestBytes(method: string, target: string, headers: readonly [string, string][], body?: Buffer): Buffer {
  const head = `${method} ${target} HTTP/1.1\r\n${headers.map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n`;
  return body && body.length > 0 ? Buffer.concat([Buffer.from(head, "latin1"), body]) : Buffer.from(head, "latin1");
}

/** A body in chunked transfer encoding, cut into pieces at `cuts` (offsets into `body`). */
export function chunked(body: Buffer, cuts: readonly number[]): Buffer {
  const at = [...new Set(cuts.map((c) => Math.max(0, Math.min(body.length, c))))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let from = 0;
  for (const to of [...at, body.length]) {
    if (to <= from) continue;
    out.push(Buffer.from(`${(to - from).toString(16)}\r\n`), body.subarray(from, to), Buffer.from("\r\n"));
    from = to;
  }
  out.push(Buffer.from("0\r\n\r\n"));
  return Buffer.concat(out);
}
