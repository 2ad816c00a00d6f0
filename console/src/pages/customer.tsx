// A customer's overview: what is left, what requests in flight hold, and what was spent,
// exact as the server wrote them, the currency beside each figure.
import { useEffect, useState } from "preact/hooks";
import { call, type Session } from "../api.js";
import { formatTime, viewerZone } from "../time.js";
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
  const [me, setMe] = useState<{ figures: Me; at: number }>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    call<Me>("GET", "/console/api/me").then((figures) => setMe({ figures, at: Date.now() }), (err: Error) => setError(err.message));
  }, []);
  if (error) return <p role="alert" class="error">{error}</p>;
  if (!me) return <p aria-busy="true">Loading…</p>;
  const { figures } = me;
  return (
    <section aria-labelledby="overview-title">
      <h1 id="overview-title">Overview</h1>
      <p>Token <strong>{figures.token}</strong> of user <strong>{figures.user}</strong>, group <strong>{figures.group}</strong>.</p>
      <dl class="figures">
        <div><dt>Balance</dt><dd><Money testid="balance" amount={figures.balance} currency={figures.currency} /></dd></div>
        <div><dt>Reserved by requests in flight</dt><dd><Money testid="reserved" amount={figures.reserved} currency={figures.currency} /></dd></div>
        <div><dt>Spent</dt><dd><Money testid="spent" amount={figures.spent} currency={figures.currency} /></dd></div>
      </dl>
      <p class="hint" data-testid="figures-time">As of {formatTime(me.at)} ({viewerZone()}).</p>
    </section>
  );
}
