// The audit log, newest first, paged on the server (before cursors), filtered by actor
// (an admin key's name, cli:<user>, token:<name>) and target.
import { useState } from "preact/hooks";
import { formatTime, zoneNote } from "../../time.js";
import { FIRST_PAGE, currentCursor, listPath, type Cursors } from "./logic.js";
import { msOf, type ListPage } from "./list.js";
import { Pager } from "./pager.js";
import { useAdmin } from "./use-admin.js";

interface AuditRecord {
  readonly id: number;
  readonly at: string;
  readonly actor: string;
  readonly action: string;
  readonly target: string;
  readonly after?: unknown;
}

export function AuditPage() {
  const [actor, setActor] = useState("");
  const [target, setTarget] = useState("");
  const [cursors, setCursors] = useState<Cursors>(FIRST_PAGE);
  const log = useAdmin<ListPage<AuditRecord>>(listPath("audit", { actor, target }, 25, "before", currentCursor(cursors)));
  const rows = log.data?.data ?? [];
  const filter = (set: (v: string) => void) => (e: Event) => { set((e.target as HTMLInputElement).value); setCursors(FIRST_PAGE); };
  return (
    <section aria-labelledby="audit-title">
      <h1 id="audit-title">Audit log</h1>
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <div><label for="audit-actor">Actor</label><input id="audit-actor" data-testid="audit-actor" value={actor} onInput={filter(setActor)} /></div>
        <div><label for="audit-target">Target</label><input id="audit-target" data-testid="audit-target" value={target} onInput={filter(setTarget)} /></div>
      </form>
      {log.error && <p role="alert" class="error">{log.error}</p>}
      <div class="table-wrap">
        <table data-testid="audit">
          <caption class="sr-only">Changes, newest first</caption>
          <thead><tr><th scope="col">When</th><th scope="col">Actor</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">Amount</th></tr></thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.id} data-testid="audit-row" data-action={r.action}>
                <td>{formatTime(msOf(r.at) ?? 0)}</td><td>{r.actor}</td><td>{r.action}</td><td>{r.target}</td><td>{amountOf(r.after) ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {rows.length === 0 && !log.error && !log.loading && <p>No changes match.</p>}
      <p class="hint">{zoneNote()}</p>
      <Pager label="audit records" cursors={cursors} next={log.data?.next} onMove={setCursors} />
    </section>
  );
}

/** A credit entry's amount, when the record is one: the store's view writes its nano-units
 * as the exact decimal (`amountNano`), a code batch's as `amountNano` too. */
function amountOf(after: unknown): string | undefined {
  if (typeof after !== "object" || after === null) return undefined;
  const { amountNano, amount } = after as { amountNano?: unknown; amount?: unknown };
  const value = amountNano ?? amount;
  return typeof value === "string" ? value : undefined;
}
