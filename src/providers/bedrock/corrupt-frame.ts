// A frame of an event-stream answer that cannot be read: the stream errors with it.

export class CorruptFrame extends Error {
  /** The SSE bytes of the whole frames before it in the same chunk. */
  before?: Buffer;

  constructor(message: string) {
    super(message);
    this.name = "CorruptFrame";
  }
}
