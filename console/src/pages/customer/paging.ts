// Paging through the requests the server lists newest first: the server hands a `next`
// cursor for older rows; the page keeps the cursors of the pages it came through, so
// "Newer" goes back the way it came. No cursor is ever made up here.

/** Where the reader is: the `before` cursor of each page shown, the current one last
 * (undefined: the newest page). */
export interface PageTrail {
  readonly cursors: readonly (string | undefined)[];
}

/** The newest page. */
export const newest: PageTrail = Object.freeze({ cursors: Object.freeze([undefined]) });

/** The `before` of the page to show now. */
export function currentCursor(trail: PageTrail): string | undefined {
  return trail.cursors[trail.cursors.length - 1];
}

/** One page older, given the `next` the server answered for the current page. */
export function older(trail: PageTrail, next: string | undefined): PageTrail {
  if (next === undefined || next === "") return trail;
  return { cursors: [...trail.cursors, next] };
}

/** One page newer: the previous page's cursor (the newest page stays the newest). */
export function newer(trail: PageTrail): PageTrail {
  return trail.cursors.length <= 1 ? trail : { cursors: trail.cursors.slice(0, -1) };
}

/** Whether there is a newer page to go back to. */
export function hasNewer(trail: PageTrail): boolean {
  return trail.cursors.length > 1;
}

/** The query of GET /console/api/me/requests for the current page. */
export function pageQuery(trail: PageTrail, limit: number): string {
  const q = new URLSearchParams({ limit: String(limit) });
  const before = currentCursor(trail);
  if (before !== undefined) q.set("before", before);
  return q.toString();
}
