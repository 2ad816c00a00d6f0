// The admin API's list answer.
export interface ListPage<T> {
  readonly data: readonly T[];
  readonly next?: string;
}

/** The admin API reports money in the gateway's one currency. */
export const CURRENCY = "USD";

/** An ISO time from the API as epoch ms (for formatTime), or undefined. */
export function msOf(iso: string | undefined): number | undefined {
  if (iso === undefined) return undefined;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? undefined : ms;
}
