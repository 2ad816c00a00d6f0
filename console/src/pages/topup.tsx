// The top-up form: an exact amount for the chosen user, posted to the admin API's credit
// route with an idempotency key kept until it succeeds, so a retried click credits once.
import { useState } from "preact/hooks";
import { ApiError, call, type Session } from "../api.js";
import { topUpAmount } from "../money.js";

function newKey(): string {
  return `console-${crypto.randomUUID()}`;
}

export function TopUpForm({ session, user, currency, onDone }: { session: Session; user?: string; currency: string; onDone: () => void }) {
  const [typed, setTyped] = useState("");
  const [reason, setReason] = useState("");
  const [key, setKey] = useState(newKey);
  const [message, setMessage] = useState<{ kind: "error" | "done"; text: string }>();
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!user) return;
    const checked = topUpAmount(typed);
    if ("error" in checked) {
      setMessage({ kind: "error", text: checked.error });
      return;
    }
    setBusy(true);
    try {
      const result = await call<{ user: { balance: string } }>("POST", `/console/api/admin/users/${encodeURIComponent(user)}/credit`, {
        csrf: session.csrf, body: { amount: checked.amount, reason: reason || "top-up from the console", idempotency_key: key },
      });
      setMessage({ kind: "done", text: `Added ${checked.amount} ${currency} to ${user}; balance now ${result.user.balance} ${currency}.` });
      setTyped("");
      setKey(newKey());
      onDone();
    } catch (err) {
      setMessage({ kind: "error", text: err instanceof ApiError ? err.message : "The gateway could not be reached." });
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="topup-title">
      <h2 id="topup-title">Top up {user ?? "a user"}</h2>
      {!user && <p>Choose a user in the table first.</p>}
      <form onSubmit={submit} class="topup">
        <label for="topup-amount">Amount ({currency})</label>
        <input id="topup-amount" data-testid="topup-amount" inputMode="decimal" autocomplete="off" required disabled={!user}
          value={typed} onInput={(e) => setTyped((e.target as HTMLInputElement).value)} />
        <label for="topup-reason">Reason</label>
        <input id="topup-reason" data-testid="topup-reason" autocomplete="off" disabled={!user}
          value={reason} onInput={(e) => setReason((e.target as HTMLInputElement).value)} />
        <button type="submit" data-testid="topup-submit" disabled={!user || busy}>Add credit</button>
      </form>
      {message && <p role={message.kind === "error" ? "alert" : "status"} class={message.kind} data-testid="topup-message">{message.text}</p>}
    </section>
  );
}
