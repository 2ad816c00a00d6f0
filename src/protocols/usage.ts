// Canonical usage: every protocol's token counts normalised to one shape, so the same
// consumption costs the same whichever protocol reported it; and the units a request is
// billed by besides tokens.

import { hostedTools, type HostedTool } from "../runtime/types.js";

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
  /** Hosted tool calls the provider ran and reports (billed per call); absent when none. */
  toolCalls?: ToolCalls;
  // What the totals above hold that is priced apart (each absent when the provider reports
  // none): a part of one total, never added to it.
  /** Of `input`, audio tokens. */
  audioInput?: number;
  /** Of `input`, image tokens. */
  imageInput?: number;
  /** Of `cacheRead`, audio tokens. */
  audioCacheRead?: number;
  /** Of `cacheWrite`, tokens written for one hour (the rest are 5-minute writes). */
  cacheWrite1h?: number;
  /** Of `output`, audio tokens. */
  audioOutput?: number;
  /** Of `output`, image tokens. */
  imageOutput?: number;
  /** The service tier the answer says served it (OpenAI `service_tier`, Anthropic
   * `usage.service_tier`), as the provider names it. */
  serviceTier?: string;
}

/** The optional parts of a usage, by field name (what addUsage and copies carry). */
export const usageParts = ["audioInput", "imageInput", "audioCacheRead", "cacheWrite1h", "audioOutput", "imageOutput"] as const;
/** One of usageParts. */
export type UsagePart = (typeof usageParts)[number];

/** What a request is billed by besides tokens: the quantities a per-request, per-image,
 * per-second or per-1k-character price multiplies. */
export interface Units {
  readonly requests?: number;
  readonly images?: number;
  /** Billed duration in milliseconds. */
  readonly milliseconds?: number;
  readonly characters?: number;
  /** What the request asked that selects a price variant (image `size` and `quality`,
   * video `resolution`, `service_tier`), by the price list's `when` names. */
  readonly variant?: Readonly<Record<string, string>>;
}

/** Calls per hosted tool; a tool never called is absent. */
export type ToolCalls = Partial<Record<HostedTool, number>>;

/** `calls` with every zero count left out; undefined when nothing is left. */
export function someToolCalls(calls: ToolCalls): ToolCalls | undefined {
  let out: ToolCalls | undefined;
  for (const tool of hostedTools) {
    const n = calls[tool];
    if (n !== undefined && n > 0) (out ??= {})[tool] = n;
  }
  return out;
}

/** Adds the calls of `b` into a copy of `a`. */
export function addToolCalls(a: ToolCalls | undefined, b: ToolCalls | undefined): ToolCalls | undefined {
  if (!b) return a;
  if (!a) return { ...b };
  const out: ToolCalls = { ...a };
  for (const tool of hostedTools) if (b[tool]) out[tool] = (out[tool] ?? 0) + b[tool]!;
  return out;
}

/** Tool calls as the usage log stores them: "web_search:2,web_fetch:1" (null when none). */
export function formatToolCalls(calls: ToolCalls | undefined): string | null {
  if (!calls) return null;
  const parts: string[] = [];
  for (const tool of hostedTools) if (calls[tool]) parts.push(`${tool}:${calls[tool]}`);
  return parts.length > 0 ? parts.join(",") : null;
}

/** The stored form back; names this gateway does not know are ignored. */
export function parseToolCalls(text: string | null | undefined): ToolCalls | undefined {
  if (!text) return undefined;
  const calls: ToolCalls = {};
  for (const part of text.split(",")) {
    const [name, count] = part.split(":");
    if ((hostedTools as readonly string[]).includes(name)) calls[name as HostedTool] = tokenCount(Number(count));
  }
  return someToolCalls(calls);
}

/** A usage with every count zero. */
export function emptyUsage(): Usage {
  return { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 };
}

/** A token count from a wire field: a finite non-negative integer, else 0. */
export function tokenCount(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0;
}

/** A positive count from a wire field: a number, or a numeric string (proto3 JSON and
 * lenient OpenAI-compatible servers take "4096" for 4096), rounded up; else undefined. */
export function positiveCount(v: unknown): number | undefined {
  const n = typeof v === "number" ? v : typeof v === "string" && /^\s*\d+(\.\d+)?\s*$/.test(v) ? Number(v) : NaN;
  return Number.isFinite(n) && n > 0 ? Math.ceil(n) : undefined;
}
