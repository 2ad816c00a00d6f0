// The cost of a streamed answer, shown to its client beside the usage in the stream's final
// usage event (a streamed answer's head has gone out before its charge is known, so the
// X-Gateway-Cost header cannot carry it). Applied once, at release, to the withheld tail
// only: the one event carrying the final usage is parsed and re-serialised, nothing else.

import { eventData } from "./sse.js";
import type { HubRoute } from "./field-policy.js";

/** The usage field that carries the cost: snake_case on the OpenAI and messages wires,
 * camelCase on generate-content (its own convention). A string: an exact decimal. */
export const STREAM_COST_FIELD = "gateway_cost";
export const GENERATE_STREAM_COST_FIELD = "gatewayCost";

/**
 * Sets the cost in the last event of `tail` that carries usage, or, when `cost` is
 * undefined (the group hides it), removes a cost field an upstream put there (an upstream
 * that is itself a gateway must not show its price through ours). Returns `tail` unchanged
 * when no event carries usage.
 */
export type CostStamp = (tail: string, cost: string | undefined) => string;

/** Where one wire keeps usage in its final usage event, and the field it adds there. */
export interface UsagePlace {
  /** Cheap test on an event's raw text: only matching events are parsed. */
  readonly mark: RegExp;
  /** The usage object of a parsed event's data, if it has one. */
  readonly usageOf: (data: Record<string, unknown>) => unknown;
  readonly field: string;
}

/** The stamp of a wire whose final usage event is found as `place` says. */
export function costStamp(place: UsagePlace): CostStamp {
  return (tail, cost) => {
    if (cost === undefined && !tail.includes(`"${place.field}"`)) return tail;
    const events = splitEvents(tail);
    for (let i = events.length - 1; i >= 0; i--) {
      if (!place.mark.test(events[i])) continue;
      const rewritten = withCost(events[i], place, cost);
      if (rewritten === undefined) continue;
      events[i] = rewritten;
      return events.join("");
    }
    return tail;
  };
}

/** The event with its usage's cost field set (or removed); undefined when it has no usage. */
function withCost(event: string, place: UsagePlace, cost: string | undefined): string | undefined {
  const text = eventData(event);
  if (text === undefined) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(data)) return undefined;
  const usage = place.usageOf(data);
  if (!isObject(usage)) return undefined;
  if (cost === undefined) delete usage[place.field];
  else usage[place.field] = cost;
  return replaceData(event, JSON.stringify(data));
}

/** The event with its data lines replaced by one line of `json`, its other lines kept. */
function replaceData(event: string, json: string): string {
  const lines = event.replace(/(\r\n|\r|\n)+$/, "").split(/\r\n|\r|\n/);
  const out: string[] = [];
  let placed = false;
  for (const line of lines) {
    if (!line.startsWith("data:")) out.push(line);
    else if (!placed) {
      out.push(`data: ${json}`);
      placed = true;
    }
  }
  return out.join("\n") + "\n\n";
}

/** Whole SSE events of a tail (each with its blank-line terminator); the tail is made of
 * whole events, so a last piece without one is kept as it is. */
function splitEvents(tail: string): string[] {
  const events: string[] = [];
  const boundary = /\r\n\r\n|\n\n|\r\r/g;
  let start = 0;
  for (let m = boundary.exec(tail); m; m = boundary.exec(tail)) {
    const end = m.index + m[0].length;
    events.push(tail.slice(start, end));
    start = end;
  }
  if (start < tail.length) events.push(tail.slice(start));
  return events;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Each inbound wire's stamp. */
export const streamCost: Readonly<Record<HubRoute, CostStamp>> = Object.freeze({
  // The usage-only chunk before [DONE] (sent when the client set stream_options.include_usage).
  "chat-completions": costStamp({ mark: /"usage"\s*:\s*\{/, usageOf: (d) => d.usage, field: STREAM_COST_FIELD }),
  // response.completed: the whole response, its usage inside.
  responses: costStamp({ mark: /"usage"\s*:\s*\{/, usageOf: (d) => (isObject(d.response) ? d.response.usage : undefined), field: STREAM_COST_FIELD }),
  // message_delta: the final (cumulative) usage, just before message_stop.
  messages: costStamp({ mark: /"usage"\s*:\s*\{/, usageOf: (d) => (d.type === "message_delta" ? d.usage : undefined), field: STREAM_COST_FIELD }),
  // The last chunk (its finishReason) with the final usageMetadata.
  "generate-content": costStamp({ mark: /"usageMetadata"\s*:\s*\{/, usageOf: (d) => d.usageMetadata, field: GENERATE_STREAM_COST_FIELD }),
});
