// Deep-freezes a compiled Runtime so no part of it can be changed after the swap. Maps and
// Sets are typed read-only; their contents are frozen too.

/** Freezes `value` and everything reachable from it (objects, arrays, Map/Set contents). */
export function deepFreeze<T>(value: T, seen: WeakSet<object> = new WeakSet()): T {
  if (value === null || typeof value !== "object" || seen.has(value)) return value;
  seen.add(value);
  // Typed arrays (Buffers) cannot be frozen; they are never handed out for writing.
  if (ArrayBuffer.isView(value)) return value;
  if (value instanceof Map) {
    for (const [k, v] of value) {
      deepFreeze(k, seen);
      deepFreeze(v, seen);
    }
  } else if (value instanceof Set) {
    for (const v of value) deepFreeze(v, seen);
  } else {
    for (const key of Reflect.ownKeys(value)) {
      deepFreeze((value as Record<string | symbol, unknown>)[key], seen);
    }
  }
  return Object.freeze(value);
}
