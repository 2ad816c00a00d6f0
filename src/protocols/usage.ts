// Canonical usage: every protocol's token counts normalised to one shape, so the same
// consumption costs the same whichever protocol reported it.

export interface Usage {
  /** Input tokens not read from or written to a cache. */
  input: number;
  /** Input tokens read from a prompt cache. */
  cacheRead: number;
  /** Input tokens written to a prompt cache. */
  cacheWrite: number;
  /** All output tokens, reasoning included (reasoning is billed as output). */
  output: number;
  /** Of `output`, the reasoning/thinking tokens. */
  reasoning: number;
}

/** A usage with every count zero. */
export function emptyUsage(): Usage {
  return { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 };
}

/** A token count from a wire field: a finite non-negative integer, else 0. */
export function tokenCount(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0;
}
