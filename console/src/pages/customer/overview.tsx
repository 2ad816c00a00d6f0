// A customer's overview: what is left, what requests in flight hold, and what was spent,
// exact as the server wrote them, the currency beside each figure.
import { formatTime, viewerZone } from "../../time.js";
import { Money } from "../money.js";

import type { CustomerOverview } from "../../../../src/admin/console/overview.js";

/** GET /console/api/me: the server's own type (a type import: nothing of the server is bundled). */
export type Me = CustomerOverview;

export function Overview({ me, at }: { me: Me; at: number }) {
  return (
    <section aria-labelledby="overview-title">
      <h1 id="overview-title">Overview</h1>
      <p>Token <strong>{me.token}</strong> of user <strong>{me.user}</strong>, group <strong>{me.group}</strong>.</p>
      <dl class="figures">
        <div><dt>Balance</dt><dd><Money testid="balance" amount={me.balance} currency={me.currency} /></dd></div>
        <div><dt>Reserved by requests in flight</dt><dd><Money testid="reserved" amount={me.reserved} currency={me.currency} /></dd></div>
        <div><dt>Spent</dt><dd><Money testid="spent" amount={me.spent} currency={me.currency} /></dd></div>
      </dl>
      <p class="hint" data-testid="figures-time">As of {formatTime(at)} ({viewerZone()}).</p>
    </section>
  );
}
