// The app's frame: who is signed in decides the page (sign-in, a customer's overview, an
// operator's); a header with the name and a sign-out button.
import { useEffect, useState } from "preact/hooks";
import { call, currentSession, type Session } from "./api.js";
import { CustomerPage } from "./pages/customer.js";
import { OperatorPage } from "./pages/operator.js";
import { SignInPage } from "./pages/signin.js";

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [error, setError] = useState<string>();
  useEffect(() => {
    currentSession().then((s) => setSession(s ?? null), (err: Error) => setError(err.message));
  }, []);

  if (error) return <main><p role="alert">{error}</p></main>;
  if (session === undefined) return <main><p aria-busy="true">Loading…</p></main>;
  if (session === null) return <SignInPage onSignedIn={setSession} />;

  const signOut = async () => {
    await call("DELETE", "/console/api/session", { csrf: session.csrf }).catch(() => undefined);
    setSession(null);
  };
  return (
    <>
      <header class="bar">
        <span class="brand">Gateway console</span>
        <span class="who">{session.role === "operator" ? "Operator" : "Token"}: <strong>{session.name}</strong></span>
        <button type="button" data-testid="signout" onClick={signOut}>Sign out</button>
      </header>
      <main>
        {session.role === "operator" ? <OperatorPage session={session} /> : <CustomerPage session={session} />}
      </main>
    </>
  );
}
