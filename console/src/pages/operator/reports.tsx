// Usage and margin reports by any dimension over a span: revenue, cost to the operator and
// margin as the API's exact decimals (summed here, if at all, on BigInt nano-units), and a
// link to the same report as CSV.
import { useState } from "preact/hooks";
import { formatNano, parseNano } from "../../money.js";
import { viewerZone } from "../../time.js";
import { USAGE_DIMENSIONS, usageCsvHref, usageSearch, type UsageDimension, type UsageQuery } from "./logic.js";
import { CURRENCY } from "./list.js";
import { useAdmin, useOffers } from "./use-admin.js";

interface UsageRow {
  readonly key: string | null;
  readonly requests: number;
  readonly input: number;
  readonly output: number;
  readonly cost: string;
  readonly channel_cost: string | null;
  readonly margin: string | null;
  readonly margin_percent: string | null;
}

export function ReportsPage() {
  const [form, setForm] = useState<UsageQuery>({ by: "user", since: "30d", until: "" });
  const [query, setQuery] = useState<UsageQuery>(form);
  const withZone: UsageQuery = { ...query, timezone: viewerZone() };
  const report = useAdmin<{ by: string; data: UsageRow[] }>(`usage?${usageSearch(withZone)}`);
  const rows = report.data?.data ?? [];
  const csv = useOffers()?.("GET", "/admin/v1/usage", "format") === true;
  const revenue = formatNano(rows.reduce((sum, r) => sum + parseNano(r.cost), 0n));

  return (
    <section aria-labelledby="reports-title">
      <h1 id="reports-title">Reports</h1>
      <form class="filters" onSubmit={(e) => { e.preventDefault(); setQuery(form); }}>
        <div>
          <label for="report-by">Group by</label>
          <select id="report-by" data-testid="report-by" value={form.by} onChange={(e) => setForm({ ...form, by: (e.target as HTMLSelectElement).value as UsageDimension })}>
            {USAGE_DIMENSIONS.map((d) => <option key={d} value={d}>{d}</option>)}
          </select>
        </div>
        <div><label for="report-since">Since (a date, or a span such as 7d)</label>
          <input id="report-since" data-testid="report-since" value={form.since} onInput={(e) => setForm({ ...form, since: (e.target as HTMLInputElement).value })} /></div>
        <div><label for="report-until">Until (empty: now)</label>
          <input id="report-until" data-testid="report-until" value={form.until} onInput={(e) => setForm({ ...form, until: (e.target as HTMLInputElement).value })} /></div>
        <div><button type="submit" data-testid="report-run">Show report</button></div>
      </form>
      {report.error && <p role="alert" class="error">{report.error}</p>}
      {csv && <p><a href={usageCsvHref(withZone)} download data-testid="report-csv">Download CSV</a></p>}
      <div class="table-wrap">
        <table data-testid="report">
          <caption class="sr-only">Usage by {query.by}, money in {CURRENCY}</caption>
          <thead><tr><th scope="col">{query.by}</th><th scope="col">Requests</th><th scope="col">Input tokens</th><th scope="col">Output tokens</th>
            <th scope="col">Revenue</th><th scope="col">Cost</th><th scope="col">Margin</th><th scope="col">Margin %</th></tr></thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.key ?? "(none)"} data-testid="report-row" data-key={r.key ?? ""}>
                <th scope="row">{r.key ?? "(no channel)"}</th><td>{r.requests}</td><td>{r.input}</td><td>{r.output}</td>
                <td data-testid="report-revenue">{r.cost}</td><td>{r.channel_cost ?? "unknown"}</td><td>{r.margin ?? "unknown"}</td><td>{r.margin_percent ?? "—"}</td>
              </tr>
            ))}
          </tbody>
          {rows.length > 0 && <tfoot><tr><th scope="row">Total</th><td>{rows.reduce((n, r) => n + r.requests, 0)}</td><td /><td /><td data-testid="report-total">{revenue}</td><td /><td /><td /></tr></tfoot>}
        </table>
      </div>
      {report.data && rows.length === 0 && <p>No requests in this span.</p>}
      <p class="hint">Money in {CURRENCY}, exact. Days are counted in your time zone, {viewerZone()}.</p>
    </section>
  );
}
