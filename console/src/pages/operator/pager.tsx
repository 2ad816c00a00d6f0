// Previous/next buttons of a list paged on the server.
import { previousPage, nextPage, type Cursors } from "./logic.js";

export function Pager({ label, cursors, next, onMove }: { label: string; cursors: Cursors; next?: string; onMove: (c: Cursors) => void }) {
  return (
    <nav class="pager" aria-label={`Pages of ${label}`}>
      <button type="button" disabled={cursors.length === 1} onClick={() => onMove(previousPage(cursors))}>Previous page</button>
      <span class="hint">Page {cursors.length}</span>
      <button type="button" disabled={next === undefined} onClick={() => next !== undefined && onMove(nextPage(cursors, next))}>Next page</button>
    </nav>
  );
}
