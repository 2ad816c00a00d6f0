// A tiny onion composer: layers run in list order, each awaiting `next()` to run the rest;
// a layer that calls next() twice is a bug and throws. The request lifecycle composes its
// typed stages itself (lifecycle.ts); this stays for untyped chains of the same shape.

/** A layer: does its part, then (usually) awaits the rest of the chain. */
export type Layer<C> = (ctx: C, next: () => Promise<void>) => Promise<void>;

/** Composes layers into one function; the last layer's next() resolves immediately. */
export function compose<C>(layers: readonly Layer<C>[]): (ctx: C) => Promise<void> {
  return function run(ctx: C): Promise<void> {
    let last = -1;
    const dispatch = (i: number): Promise<void> => {
      if (i <= last) return Promise.reject(new Error("next() called more than once"));
      last = i;
      const layer = layers[i];
      if (!layer) return Promise.resolve();
      try {
        return layer(ctx, () => dispatch(i + 1));
      } catch (err) {
        return Promise.reject(err);
      }
    };
    return dispatch(0);
  };
}
