// Creating a token for the chosen user through the admin API: its key is shown once, here,
// and never again (the gateway keeps only its hash).
import { useState } from "preact/hooks";
import { ApiError, call, type Session } from "../api.js";

export function TokenForm({ session, user }: { session: Session; user?: string }) {
  const [name, setName] = useState("");
  const [made, setMade] = useState<{ name: string; key: string }>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!user) return;
    setBusy(true);
    setError(undefined);
    setMade(undefined);
    try {
      const answer = await call<{ name: string; key: string }>("POST", "/console/api/admin/tokens", {
        csrf: session.csrf, body: { name: name.trim(), user },
      });
      setMade({ name: answer.name, key: answer.key });
      setName("");
    } catch (err) {
      setError(err instanceof ApiError ? err.message : "The gateway could not be reached.");
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="token-title">
      <h2 id="token-title">New token for {user ?? "a user"}</h2>
      <form onSubmit={submit} class="topup">
        <label for="token-name">Token name</label>
        <input id="token-name" data-testid="token-name" autocomplete="off" required disabled={!user}
          value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        <button type="submit" data-testid="token-create" disabled={!user || busy}>Create token</button>
      </form>
      {error && <p role="alert" class="error">{error}</p>}
      {made && (
        <div role="status">
          <p>Token <strong>{made.name}</strong> created. Its key, shown this once:</p>
          <p><code class="secret" data-testid="token-key">{made.key}</code></p>
        </div>
      )}
    </section>
  );
}
