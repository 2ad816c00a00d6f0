// Redemption codes: make a batch (count, amount, expiry), its codes shown this once with a
// text download; the batches listed when the gateway has GET /admin/v1/codes.
import { useState } from "preact/hooks";
import { call, type Session } from "../../api.js";
import { isExactDecimal } from "../../money.js";
import { formatTime } from "../../time.js";
import { Money } from "../money.js";
import { FIRST_PAGE, codesText, currentCursor, listPath, type Cursors } from "./logic.js";
import { CURRENCY, msOf, type ListPage } from "./list.js";
import { Pager } from "./pager.js";
import { adminPath, messageOf, useAdmin, useOffers } from "./use-admin.js";

interface Batch {
  readonly batch: string;
  readonly count: number;
  readonly amount: string;
  readonly expires: string;
  readonly redeemed: number;
  readonly created_at?: string;
  readonly actor?: string;
}

export function CodesPage({ session }: { session: Session }) {
  const [count, setCount] = useState("10");
  const [amount, setAmount] = useState("");
  const [expires, setExpires] = useState("30d");
  const [batchName, setBatchName] = useState("");
  const [made, setMade] = useState<Batch & { codes: string[] }>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [cursors, setCursors] = useState<Cursors>(FIRST_PAGE);
  const [reloads, setReloads] = useState(0);
  const listed = useOffers()?.("GET", "/admin/v1/codes") === true;
  const batches = useAdmin<ListPage<Batch>>(listed ? listPath("codes", {}, 20, "after", currentCursor(cursors)) : undefined, reloads);

  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    const n = Number(count);
    if (!Number.isInteger(n) || n < 1 || n > 10_000) return setError("Count: a whole number from 1 to 10000.");
    if (!isExactDecimal(amount.trim())) return setError("Amount: an exact decimal such as 5 or 2.5.");
    setBusy(true);
    try {
      const answer = await call<Batch & { codes: string[] }>("POST", adminPath("codes"), {
        csrf: session.csrf, body: { count: n, amount: amount.trim(), expires: expires.trim(), ...(batchName.trim() ? { batch: batchName.trim() } : {}) },
      });
      setMade(answer);
      setReloads((r) => r + 1);
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  // A data: URL keeps the download within the CSP (no blob: or script needed to save it).
  const download = made ? `data:text/plain;charset=utf-8,${encodeURIComponent(codesText(made.codes))}` : undefined;

  return (
    <>
      <section aria-labelledby="codes-title">
        <h1 id="codes-title">Redemption codes</h1>
        <form class="topup" onSubmit={submit}>
          <label for="codes-count">How many codes</label>
          <input id="codes-count" data-testid="codes-count" inputMode="numeric" required value={count} onInput={(e) => setCount((e.target as HTMLInputElement).value)} />
          <label for="codes-amount">Each worth ({CURRENCY})</label>
          <input id="codes-amount" data-testid="codes-amount" inputMode="decimal" required value={amount} onInput={(e) => setAmount((e.target as HTMLInputElement).value)} />
          <label for="codes-expires">Expires (a date such as 2027-01-01, or a span such as 30d)</label>
          <input id="codes-expires" data-testid="codes-expires" required value={expires} onInput={(e) => setExpires((e.target as HTMLInputElement).value)} />
          <label for="codes-batch">Batch name (optional)</label>
          <input id="codes-batch" data-testid="codes-batch" value={batchName} onInput={(e) => setBatchName((e.target as HTMLInputElement).value)} />
          <button type="submit" data-testid="codes-create" disabled={busy}>Create codes</button>
        </form>
        {error && <p role="alert" class="error">{error}</p>}
        {made && (
          <div role="status" data-testid="codes-made">
            <p>Batch <strong>{made.batch}</strong>: {made.count} codes of <Money amount={made.amount} currency={CURRENCY} />, until {formatTime(msOf(made.expires) ?? 0)}. The codes, shown this once:</p>
            <label for="codes-list">Codes</label>
            <textarea id="codes-list" data-testid="codes-list" readOnly rows={Math.min(10, made.codes.length)} class="secret" value={codesText(made.codes)} />
            <p><a href={download} download={`codes-${made.batch}.txt`} data-testid="codes-download">Download the codes as text</a></p>
          </div>
        )}
      </section>
      {listed && !batches.missing && (
        <section aria-labelledby="batches-title">
          <h2 id="batches-title">Batches</h2>
          {batches.error && <p role="alert" class="error">{batches.error}</p>}
          <div class="table-wrap">
            <table data-testid="batches">
              <caption class="sr-only">Code batches, in {CURRENCY}</caption>
              <thead><tr><th scope="col">Batch</th><th scope="col">Codes</th><th scope="col">Redeemed</th><th scope="col">Each</th><th scope="col">Expires</th><th scope="col">By</th></tr></thead>
              <tbody>
                {(batches.data?.data ?? []).map((b) => (
                  <tr key={b.batch} data-testid="batch-row" data-batch={b.batch}>
                    <th scope="row">{b.batch}</th><td>{b.count}</td><td>{b.redeemed}</td>
                    <td><Money amount={b.amount} currency={CURRENCY} /></td>
                    <td>{formatTime(msOf(b.expires) ?? 0)}</td><td>{b.actor ?? "—"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager label="batches" cursors={cursors} next={batches.data?.next} onMove={setCursors} />
        </section>
      )}
    </>
  );
}
