// An answer framed otherwise than its protocol's first-party API frames it (Bedrock's
// binary event-stream frames for Anthropic's SSE) is read through a decoder: the upstream's
// chunks in, the protocol's bytes out. The relay (upstream/relay.ts) calls the decoder on
// the upstream body's chunks itself, with no second stream between them: a Readable in the
// middle costs a push, a 'data' event and a read scheduled for every chunk (bench/kinds.ts).
// Any other reader (an error's body read whole, a drain) reads the DecodedBody as the
// Readable it is; it takes the upstream's chunks only once something reads it.

import { Readable } from "node:stream";

/** Turns the upstream's chunks into the protocol's bytes. */
export interface ChunkDecoder {
  /** The protocol's bytes of what `chunk` completes (empty when it completes nothing);
   * throws BrokenFraming when the answer cannot be read. */
  push(chunk: Buffer): Buffer;
  /** Called when the upstream's answer ends; throws BrokenFraming when it ended inside a
   * frame. */
  end(): void;
}

/** The answer's framing cannot be read (a checksum, a length, an answer cut inside a
 * frame): the answer ends there, as if cut by the upstream. */
export class BrokenFraming extends Error {
  /** The protocol's bytes of what the chunk completed before the broken frame. */
  before?: Buffer;
}

const EMPTY = Buffer.alloc(0);

/** The decoded answer: a Readable of the protocol's bytes for any reader, and its source
 * and decoder for the relay, which reads the source through the decoder itself. Destroying
 * it destroys the source; the source's errors are its own. */
export class DecodedBody extends Readable {
  readonly source: Readable;
  readonly decoder: ChunkDecoder;
  #reading = false;

  constructor(source: Readable, decoder: ChunkDecoder) {
    super();
    this.source = source;
    this.decoder = decoder;
    // At once, not when read: an upstream error must find a listener either way.
    source.on("error", (error) => this.destroy(error));
  }

  override _read(): void {
    if (this.#reading) {
      if (this.source.isPaused()) this.source.resume();
      return;
    }
    this.#reading = true;
    this.source.on("data", (chunk: Buffer) => {
      let bytes: Buffer;
      try {
        bytes = this.decoder.push(chunk);
      } catch (error) {
        this.source.pause();
        return this.#fail(error as Error);
      }
      if (bytes.length > 0 && !this.push(bytes)) this.source.pause();
    });
    this.source.on("end", () => {
      try {
        this.decoder.end();
        this.push(null);
      } catch (error) {
        this.#fail(error as Error);
      }
    });
  }

  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    if (!this.source.readableEnded) this.source.destroy();
    done(error);
  }

  /** What came before the broken frame, then the error (as a read of the data above). */
  #fail(error: Error): void {
    const before = error instanceof BrokenFraming ? error.before ?? EMPTY : EMPTY;
    if (before.length > 0) this.push(before);
    process.nextTick(() => this.destroy(error));
  }
}

/** The source and decoder of a decoded answer; undefined for a body to read as it is. */
export function decodingOf(body: Readable): DecodedBody | undefined {
  return body instanceof DecodedBody ? body : undefined;
}
