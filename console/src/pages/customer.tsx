// A customer's overview: what is left, what requests in flight hold, and what was spent,
// exact as the server wrote them, the currency beside each figure.
import { useEffect, useState } from "preact/hooks";
import { call, type Session } from "../api.js";
import { Money } from "./money.js";

/** GET /console/api/me. */
interface Me {
  readonly role: "customer";
  readonly token: string;
  readonly user: string;
  readonly group: string;
  readonly balance: string;
  readonly reserved: string;
  readonly spent: string;
  readonly currency: string;
}

export function CustomerPage(_: { session: Session }) {
  const [me, setMe] = useState<Me>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    call<Me>("GET", "/console/api/me").then(setMe, (err: Error) => setError(err.message));
  }, []);
  if (error) return <p role="alert" class="error">{error}</p>;
  if (!me) return <p aria-busy="true">Loading…</p>;
  return (
    <section aria-labelledby="overview-title">
      <h1 id="overview-title">Overview</h1>
      <p>Token <strong>{me.token}</strong> of user <strong>{me.user}</strong>, group <strong>{me.group}</strong>.</p>
      <dl class="figures">
        <div><dt>Balance</dt><dd><Money testid="balance" amount={me.balance} currency={me.currency} /></dd></div>
        <div><dt>Reserved by requests in flight</dt><dd><Money testid="reserved" amount={me.reserved} currency={me.currency} /></dd></div>
        <div><dt>Spent</dt><dd><Money testid="spent" amount={me.spent} currency={me.currency} /></dd></div>
      </dl>
    </section>
  );
}
