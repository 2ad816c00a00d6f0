// A tiny onion composer: stages run in list order, each awaiting `next()` to run the rest.
// Composed once per route at startup; a stage that calls next() twice is a bug and throws.

/** A pipeline stage: does its part, then (usually) awaits the rest of the chain. */
export type Stage<C> = (ctx: C, next: () => Promise<void>) => Promise<void>;

/** Composes stages into one function; the last stage's next() resolves immediately. */
export function compose<C>(stages: readonly Stage<C>[]): (ctx: C) => Promise<void> {
  return function run(ctx: C): Promise<void> {
    let last = -1;
    const dispatch = (i: number): Promise<void> => {
      if (i <= last) return Promise.reject(new Error("next() called more than once"));
      last = i;
      const stage = stages[i];
      if (!stage) return Promise.resolve();
      try {
        return stage(ctx, () => dispatch(i + 1));
      } catch (err) {
        return Promise.reject(err);
      }
    };
    return dispatch(0);
  };
}
