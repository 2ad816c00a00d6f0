// Redeem: a code an operator handed out, credited to the customer's balance; the new balance
// is shown here and the overview's figures are read again.
import { useState } from "preact/hooks";
import { ApiError, call, type Session } from "../../api.js";
import { Money } from "../money.js";
import type { Me } from "./overview.js";

/** POST /console/api/me/redeem. */
interface Redemption {
  readonly redeemed: string;
  readonly balance?: string;
}

export function Redeem({ session, me, onRedeemed }: { session: Session; me?: Me; onRedeemed: () => void }) {
  const [code, setCode] = useState("");
  const [done, setDone] = useState<Redemption>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const currency = me?.currency ?? "";

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    setDone(undefined);
    try {
      const answer = await call<Redemption>("POST", "/console/api/me/redeem", { csrf: session.csrf, body: { code: code.trim() } });
      setDone(answer);
      setCode("");
      onRedeemed();
    } catch (err) {
      setError(err instanceof ApiError ? err.message : "The gateway could not be reached.");
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="redeem-title">
      <h1 id="redeem-title">Redeem a code</h1>
      {me && <p>Balance now: <Money amount={me.balance} currency={currency} /></p>}
      <form class="topup" onSubmit={submit}>
        <label for="redeem-code">Redemption code</label>
        <input id="redeem-code" data-testid="redeem-code" autocomplete="off" spellcheck={false} required
          value={code} onInput={(e) => setCode((e.target as HTMLInputElement).value)} />
        <button type="submit" data-testid="redeem-submit" disabled={busy}>Redeem</button>
      </form>
      {error && <p role="alert" class="error" data-testid="redeem-error">{error}</p>}
      {done && (
        <p role="status" class="done" data-testid="redeem-message">
          Redeemed <Money amount={done.redeemed} currency={currency} />.
          {done.balance !== undefined && <> Your balance is now <Money testid="redeem-balance" amount={done.balance} currency={currency} />.</>}
        </p>
      )}
    </section>
  );
}
