// Requests: the customer's own, newest first, paged on the server ("Older" follows its
// `next`), each row opening to its cost breakdown; and a search by request id (the
// X-Gateway-Request-Id of an answer). Times in the viewer's zone, named.
import { Fragment } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ApiError, call } from "../../api.js";
import { formatTime, zoneNote } from "../../time.js";
import { Money } from "../money.js";
import { hasNewer, newer, newest, older, pageQuery, type PageTrail } from "./paging.js";

interface BreakdownLine {
  readonly component: string;
  readonly quantity: number | string;
  readonly unit_price: string;
  readonly per: string;
  readonly subtotal: string;
}

/** One row of GET /console/api/me/requests. */
export interface RequestRow {
  readonly request_id: string;
  readonly time: number;
  readonly model: string;
  readonly protocol: string;
  readonly status: number | string;
  readonly error?: string;
  readonly input_tokens: number;
  readonly output_tokens: number;
  readonly cache_read_tokens?: number;
  readonly cache_write_tokens?: number;
  readonly reasoning_tokens?: number;
  readonly cost: string;
  readonly breakdown?: {
    readonly lines: readonly BreakdownLine[];
    readonly multiplier: string;
    readonly service_tier?: { readonly name: string; readonly multiplier: string };
    readonly variant?: string;
    readonly total: string;
  } | null;
  readonly estimated?: boolean;
  readonly refunded_at?: number;
  readonly duration_ms: number;
}

const PAGE = 25;

export function Requests({ currency }: { currency: string }) {
  const [trail, setTrail] = useState<PageTrail>(newest);
  const [page, setPage] = useState<{ rows: readonly RequestRow[]; next?: string }>();
  const [search, setSearch] = useState("");
  const [found, setFound] = useState<{ id: string; row?: RequestRow; missing?: string }>();
  const [error, setError] = useState<string>();

  useEffect(() => {
    call<{ rows: RequestRow[]; next?: string }>("GET", `/console/api/me/requests?${pageQuery(trail, PAGE)}`)
      .then((p) => { setPage(p); setError(undefined); }, (err: Error) => setError(messageOf(err)));
  }, [trail]);

  const find = async (e: Event) => {
    e.preventDefault();
    const id = search.trim();
    if (id === "") { setFound(undefined); return; }
    try {
      const answer = await call<{ rows: RequestRow[] }>("GET", `/console/api/me/requests?${new URLSearchParams({ id })}`);
      setFound({ id, row: answer.rows[0] });
    } catch (err) {
      if (err instanceof ApiError && (err.status === 404 || err.status === 400)) setFound({ id, missing: err.message });
      else setError(messageOf(err as Error));
    }
  };

  const rows = found ? (found.row ? [found.row] : []) : page?.rows ?? [];
  return (
    <section aria-labelledby="requests-title">
      <h1 id="requests-title">Requests</h1>
      <form class="search" role="search" onSubmit={find}>
        <label for="request-search">Find by request id</label>
        <div class="inline">
          <input id="request-search" data-testid="request-search" type="search" autocomplete="off" spellcheck={false}
            value={search} onInput={(e) => setSearch((e.target as HTMLInputElement).value)} />
          <button type="submit" data-testid="request-find">Find</button>
          {found && <button type="button" onClick={() => { setFound(undefined); setSearch(""); }}>Show all requests</button>}
        </div>
      </form>
      {found?.missing && <p role="status" data-testid="request-missing">Not found: {found.missing}</p>}
      {error && <p role="alert" class="error">{error}</p>}
      <p class="hint">{zoneNote()} Money in {currency}.</p>
      {!page && !error && !found && <p aria-busy="true">Loading…</p>}
      <div class="table-wrap">
        <table data-testid="requests">
          <caption class="sr-only">{found ? `Request ${found.id}` : "Your requests, newest first"}</caption>
          <thead>
            <tr><th scope="col">Time</th><th scope="col">Model</th><th scope="col">Protocol</th><th scope="col">Status</th>
              <th scope="col">Tokens in / out</th><th scope="col">Cost</th><th scope="col">Details</th></tr>
          </thead>
          <tbody>{rows.map((r) => <RequestLine key={found ? `found-${r.request_id}` : r.request_id} row={r} currency={currency} open={found?.row !== undefined} />)}</tbody>
        </table>
      </div>
      {page && page.rows.length === 0 && !found && <p>No requests yet.</p>}
      {!found && (
        <nav class="pager" aria-label="Pages of requests">
          <button type="button" disabled={!hasNewer(trail)} onClick={() => setTrail(newer(trail))}>Newer</button>
          <button type="button" data-testid="requests-older" disabled={page?.next === undefined} onClick={() => setTrail(older(trail, page?.next))}>Older</button>
        </nav>
      )}
    </section>
  );
}

/** A request's row and, once opened, its breakdown below it (a found request opens at once). */
function RequestLine({ row, currency, open: openAtFirst }: { row: RequestRow; currency: string; open: boolean }) {
  const [open, setOpen] = useState(openAtFirst);
  const detailsId = `breakdown-${row.request_id}`;
  return (
    <Fragment>
      <tr data-request-id={row.request_id}>
        <td>{formatTime(row.time)}</td>
        <td>{row.model}</td>
        <td>{row.protocol}</td>
        <td>{row.status}{row.error ? ` (${row.error})` : ""}</td>
        <td>{row.input_tokens} / {row.output_tokens}</td>
        <td><span data-testid="request-cost">{row.cost}</span>{row.estimated ? " (estimated)" : ""}{row.refunded_at !== undefined ? " (refunded)" : ""}</td>
        <td>
          <button type="button" aria-expanded={open} aria-controls={detailsId} aria-label={`Cost breakdown of ${row.request_id}`}
            onClick={() => setOpen(!open)}>{open ? "Hide" : "Show"}</button>
        </td>
      </tr>
      {open && (
        <tr id={detailsId} class="details">
          <td colSpan={7}><Breakdown row={row} currency={currency} /></td>
        </tr>
      )}
    </Fragment>
  );
}

function Breakdown({ row, currency }: { row: RequestRow; currency: string }) {
  const b = row.breakdown;
  const extra = [
    row.cache_read_tokens ? `${row.cache_read_tokens} cache read` : "",
    row.cache_write_tokens ? `${row.cache_write_tokens} cache write` : "",
    row.reasoning_tokens ? `${row.reasoning_tokens} reasoning` : "",
  ].filter(Boolean).join(", ");
  return (
    <div class="breakdown" data-testid="request-breakdown">
      <p>Request id <code class="secret">{row.request_id}</code>, {Math.round(row.duration_ms)} ms{extra ? `; tokens: ${extra}` : ""}.</p>
      {b ? (
        <>
          <ul>
            {b.lines.map((l) => (
              <li key={l.component}>{l.component}: {String(l.quantity)} × {l.unit_price} {currency} per {l.per} = {l.subtotal} {currency}</li>
            ))}
          </ul>
          <p>
            Multiplier ×{b.multiplier}{b.service_tier ? `, service tier ${b.service_tier.name} ×${b.service_tier.multiplier}` : ""}{b.variant ? `, ${b.variant}` : ""}.
            Total <Money amount={b.total} currency={currency} />; charged <Money amount={row.cost} currency={currency} />.
          </p>
        </>
      ) : (
        <p>Charged <Money amount={row.cost} currency={currency} />{b === null ? " (its breakdown could not be read)" : ""}.</p>
      )}
    </div>
  );
}

function messageOf(err: Error): string {
  return err instanceof ApiError ? err.message : "The gateway could not be reached.";
}
