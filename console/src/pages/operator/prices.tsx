// The price list as the gateway compiled it (GET /admin/v1/prices): per model each section's
// components, their list price and what each group is charged, exact decimals as sent.
import { useAdmin, useOffers } from "./use-admin.js";

interface PriceRow {
  readonly component: string;
  readonly per: string;
  readonly price: string;
  readonly from: string;
  readonly charged: Readonly<Record<string, string>>;
}
interface PriceSection {
  readonly kind: string;
  readonly above_input_tokens?: number;
  readonly when?: Readonly<Record<string, string>>;
  readonly rows: readonly PriceRow[];
}
interface ModelPrice {
  readonly model: string;
  readonly sections: readonly PriceSection[];
}
interface PriceList {
  readonly source: { readonly file: string; readonly sha256: string };
  readonly groups: Readonly<Record<string, string>>;
  readonly data: readonly ModelPrice[];
}

function sectionName(s: PriceSection): string {
  if (s.kind === "tier") return `above ${s.above_input_tokens ?? 0} input tokens`;
  if (s.kind === "variant") return `when ${Object.entries(s.when ?? {}).map(([k, v]) => `${k}=${v}`).join(", ")}`;
  return "price";
}

export function PricesPage() {
  const offered = useOffers();
  const absent = offered !== undefined && !offered("GET", "/admin/v1/prices");
  const prices = useAdmin<PriceList>(offered === undefined || absent ? undefined : "prices");
  const p = prices.data;
  return (
    <section aria-labelledby="prices-title">
      <h1 id="prices-title">Prices</h1>
      {(absent || prices.missing) && <p data-testid="prices-missing">This gateway does not publish its price list yet (no /admin/v1/prices).</p>}
      {prices.error && !prices.missing && <p role="alert" class="error">{prices.error}</p>}
      {p && (
        <>
          <p class="hint">From <code>{p.source.file}</code> (sha256 <code class="secret">{p.source.sha256.slice(0, 12)}…</code>). Group multipliers: {Object.entries(p.groups).map(([g, m]) => `${g} × ${m}`).join(", ")}.</p>
          {p.data.map((m) => {
            const groups = [...new Set(m.sections.flatMap((s) => s.rows.flatMap((r) => Object.keys(r.charged))))];
            return (
              <div key={m.model} class="table-wrap" data-testid="price-model" data-model={m.model}>
                <table>
                  <caption>{m.model}</caption>
                  <thead><tr><th scope="col">Section</th><th scope="col">Component</th><th scope="col">Per</th><th scope="col">List price</th><th scope="col">From</th>
                    {groups.map((g) => <th key={g} scope="col">Charged in {g}</th>)}</tr></thead>
                  <tbody>
                    {m.sections.flatMap((s) => s.rows.map((r) => (
                      <tr key={`${sectionName(s)}-${r.component}`}>
                        <td>{sectionName(s)}</td><th scope="row">{r.component}</th><td>{r.per}</td><td>{r.price}</td><td>{r.from}</td>
                        {groups.map((g) => <td key={g}>{r.charged[g] ?? "—"}</td>)}
                      </tr>
                    )))}
                  </tbody>
                </table>
              </div>
            );
          })}
        </>
      )}
    </section>
  );
}
