// A customer's pages: a navigation bar of plain links (hash addresses) and the page chosen.
// The overview's figures live here, so a redemption on another page updates the balance.
import { useCallback, useEffect, useState } from "preact/hooks";
import { call, type Session } from "../api.js";
import { Overview, type Me } from "./customer/overview.js";
import { QuickStart } from "./customer/quickstart.js";
import { Redeem } from "./customer/redeem.js";
import { Requests } from "./customer/requests.js";
import { Tokens } from "./customer/tokens.js";
import { Usage } from "./customer/usage.js";
import { CUSTOMER_VIEWS, hashOf, viewOfHash, type CustomerView } from "./customer/views.js";

export function CustomerPage({ session }: { session: Session }) {
  const [view, setView] = useState<CustomerView>(() => viewOfHash(location.hash));
  const [me, setMe] = useState<{ figures: Me; at: number }>();
  const [error, setError] = useState<string>();

  useEffect(() => {
    const follow = () => setView(viewOfHash(location.hash));
    addEventListener("hashchange", follow);
    return () => removeEventListener("hashchange", follow);
  }, []);
  const reload = useCallback(() => {
    call<Me>("GET", "/console/api/me").then((figures) => { setMe({ figures, at: Date.now() }); setError(undefined); },
      (err: Error) => setError(err.message));
  }, []);
  useEffect(reload, [reload]);

  const title = CUSTOMER_VIEWS.find((v) => v.id === view)!.label;
  useEffect(() => { document.title = `${title} · Gateway console`; }, [title]);

  return (
    <>
      <nav class="tabs" aria-label="Customer pages">
        <ul>
          {CUSTOMER_VIEWS.map((v) => (
            <li key={v.id}><a href={hashOf(v.id)} data-testid={`nav-${v.id}`} aria-current={v.id === view ? "page" : undefined}>{v.label}</a></li>
          ))}
        </ul>
      </nav>
      {error && <p role="alert" class="error">{error}</p>}
      {view === "overview" && (me ? <Overview me={me.figures} at={me.at} /> : !error && <p aria-busy="true">Loading…</p>)}
      {view === "usage" && <Usage currency={me?.figures.currency ?? ""} />}
      {view === "requests" && <Requests currency={me?.figures.currency ?? ""} />}
      {view === "tokens" && <Tokens session={session} currency={me?.figures.currency ?? ""} />}
      {view === "redeem" && <Redeem session={session} me={me?.figures} onRedeemed={reload} />}
      {view === "quickstart" && <QuickStart />}
    </>
  );
}
