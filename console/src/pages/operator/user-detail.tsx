// One user's detail: money (balance, reserved, spent), plan (assign or remove: PATCH user)
// and credit history, newest first, paged on the server (before cursors).
import { useState } from "preact/hooks";
import { call, type Session } from "../../api.js";
import { formatTime, zoneNote } from "../../time.js";
import { Money } from "../money.js";
import { FIRST_PAGE, currentCursor, listPath, type Cursors } from "./logic.js";
import { CURRENCY, msOf, type ListPage } from "./list.js";
import { Pager } from "./pager.js";
import { adminPath, messageOf, useAdmin } from "./use-admin.js";
import type { UserRow } from "./users.js";

interface CreditEntry {
  readonly id: number;
  readonly amount: string;
  readonly kind: string;
  readonly reason: string;
  readonly actor: string;
  readonly at: string;
}

const PAGE = 10;

export function UserDetail({ session, user, reload, onChanged }: { session: Session; user: string; reload: number; onChanged: () => void }) {
  const [cursors, setCursors] = useState<Cursors>(FIRST_PAGE);
  const [plan, setPlan] = useState("");
  const [message, setMessage] = useState<{ kind: "error" | "done"; text: string }>();
  const name = encodeURIComponent(user);
  const detail = useAdmin<UserRow>(`users/${name}`, reload);
  const credit = useAdmin<ListPage<CreditEntry>>(listPath(`users/${name}/credit`, {}, PAGE, "before", currentCursor(cursors)), reload);
  const u = detail.data;

  const assignPlan = async (value: string | null) => {
    setMessage(undefined);
    try {
      await call("PATCH", adminPath(`users/${name}`), { csrf: session.csrf, body: { plan: value } });
      setMessage({ kind: "done", text: value === null ? `Plan removed from ${user}.` : `Plan ${value} assigned to ${user}.` });
      setPlan("");
      onChanged();
    } catch (err) {
      setMessage({ kind: "error", text: messageOf(err) });
    }
  };

  return (
    <section aria-labelledby="detail-title" data-testid="user-detail">
      <h2 id="detail-title">User {user}</h2>
      {detail.error && <p role="alert" class="error">{detail.error}</p>}
      {u && (
        <dl class="figures">
          <div><dt>Balance</dt><dd><Money testid="detail-balance" amount={u.balance} currency={CURRENCY} /></dd></div>
          <div><dt>Reserved</dt><dd><Money testid="detail-reserved" amount={u.reserved ?? "0"} currency={CURRENCY} /></dd></div>
          <div><dt>Spent</dt><dd><Money testid="detail-spent" amount={u.spent} currency={CURRENCY} /></dd></div>
          <div><dt>Status, plan, groups</dt><dd class="small">{u.status}; plan {u.plan ?? "none"}; {u.groups.join(", ")}</dd></div>
        </dl>
      )}
      {u?.source === "store" && (
        <form class="topup" onSubmit={(e) => { e.preventDefault(); if (plan.trim()) void assignPlan(plan.trim()); }}>
          <label for="plan-name">Plan (one gateway.yaml declares)</label>
          <input id="plan-name" data-testid="plan-name" autocomplete="off" required value={plan} onInput={(e) => setPlan((e.target as HTMLInputElement).value)} />
          <button type="submit" data-testid="plan-assign">Assign plan</button>
          {u.plan && <button type="button" data-testid="plan-remove" onClick={() => assignPlan(null)}>Remove plan {u.plan}</button>}
        </form>
      )}
      {message && <p role={message.kind === "error" ? "alert" : "status"} class={message.kind}>{message.text}</p>}
      <h3>Credit history</h3>
      {credit.error && <p role="alert" class="error">{credit.error}</p>}
      <div class="table-wrap">
        <table data-testid="credit-entries">
          <caption class="sr-only">Credit entries of {user}, newest first, in {CURRENCY}</caption>
          <thead><tr><th scope="col">When</th><th scope="col">Amount</th><th scope="col">Kind</th><th scope="col">Reason</th><th scope="col">By</th></tr></thead>
          <tbody>
            {(credit.data?.data ?? []).map((c) => (
              <tr key={c.id} data-testid="credit-row">
                <td>{formatTime(msOf(c.at) ?? 0)}</td>
                <td><Money amount={c.amount} currency={CURRENCY} /></td>
                <td>{c.kind}</td><td class="wrap">{c.reason}</td><td>{c.actor}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p class="hint">{zoneNote()}</p>
      <Pager label="credit entries" cursors={cursors} next={credit.data?.next} onMove={setCursors} />
    </section>
  );
}
