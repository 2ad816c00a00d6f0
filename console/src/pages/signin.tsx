// Sign-in: one field for a customer's token or an operator's admin key. The secret goes to
// the server once; the page keeps only the session the server answers.
import { useState } from "preact/hooks";
import { ApiError, call, type Session } from "../api.js";

export function SignInPage({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  const [secret, setSecret] = useState("");
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const session = await call<Session>("POST", "/console/api/session", { body: { secret } });
      setSecret("");
      onSignedIn(session);
    } catch (err) {
      setError(err instanceof ApiError ? err.message : "The gateway could not be reached.");
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="signin">
      <h1>Gateway console</h1>
      <form onSubmit={submit}>
        <label for="signin-secret">Access token or admin key</label>
        <input id="signin-secret" data-testid="signin-secret" type="password" autocomplete="off" required
          value={secret} onInput={(e) => setSecret((e.target as HTMLInputElement).value)} />
        <button type="submit" data-testid="signin-submit" disabled={busy}>Sign in</button>
        {error && <p role="alert" class="error">{error}</p>}
      </form>
      <p class="hint">Customers sign in with one of their tokens; operators with an admin key.</p>
    </main>
  );
}
