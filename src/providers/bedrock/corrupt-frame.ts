// A frame of an event-stream answer that cannot be read: the answer ends there
// (providers/framing.ts).

import { BrokenFraming } from "../framing.js";

export class CorruptFrame extends BrokenFraming {
  constructor(message: string) {
    super(message);
    this.name = "CorruptFrame";
  }
}
