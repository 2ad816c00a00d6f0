// V8 settings for a process that serves requests. Set when the gateway starts serving.

import v8 from "node:v8";

/**
 * Turns off V8's allocation-site pretenuring. A request's objects die within the request,
 * but a moment of lag (a stalled host, a long GC) can leave enough of them alive across a
 * minor GC that V8 decides some allocation site makes long-lived objects, and from then on
 * allocates them straight into the old generation. A dead old object keeps whatever young
 * objects it points to alive through every minor GC until the next full one, so each
 * request's objects were then promoted: measured ~1.3 MB promoted per minor GC instead of
 * ~0.14 MB, 3-4× the GC pause time, and 20-50 % more CPU per request. V8 never takes such a
 * decision back, so the process stayed in that state (7 of 20 benchmark runs on a noisy
 * host; none of 34 with pretenuring off). What a gateway keeps for long (config, pools,
 * counters) is built once, so it loses nothing by it.
 */
export function tuneHeapForServing(): void {
  v8.setFlagsFromString("--no-allocation-site-pretenuring");
}
