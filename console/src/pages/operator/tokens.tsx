// Tokens: every stored token, filtered by user or name prefix, paged on the server; disable,
// enable, and revoke (for good, after a confirmation). New tokens are made on the Users page.
import { useState } from "preact/hooks";
import type { TokenView } from "../../../../src/accounts/service.js";
import { call, type Session } from "../../api.js";
import { formatTime } from "../../time.js";
import { Money } from "../money.js";
import { FIRST_PAGE, currentCursor, listPath, type Cursors } from "./logic.js";
import { CURRENCY, msOf, type ListPage } from "./list.js";
import { Pager } from "./pager.js";
import { adminPath, messageOf, useAdmin } from "./use-admin.js";

/** A token as the admin API lists it: the server's own type (a type import, nothing bundled). */
type TokenRow = TokenView;

const PAGE = 20;

export function TokensPage({ session }: { session: Session }) {
  const [user, setUser] = useState("");
  const [prefix, setPrefix] = useState("");
  const [cursors, setCursors] = useState<Cursors>(FIRST_PAGE);
  const [reloads, setReloads] = useState(0);
  const [confirming, setConfirming] = useState<string>();
  const [message, setMessage] = useState<{ kind: "error" | "done"; text: string }>();
  const list = useAdmin<ListPage<TokenRow>>(listPath("tokens", { user, prefix }, PAGE, "after", currentCursor(cursors)), reloads);
  const rows = list.data?.data ?? [];

  const act = async (t: TokenRow, method: "PATCH" | "DELETE", body?: unknown) => {
    setMessage(undefined);
    try {
      const after = await call<TokenRow>(method, adminPath(`tokens/${encodeURIComponent(t.name)}`), { csrf: session.csrf, body });
      setMessage({ kind: "done", text: `Token ${t.name} is now ${after.status}.` });
      setConfirming(undefined);
      setReloads((n) => n + 1);
    } catch (err) {
      setMessage({ kind: "error", text: messageOf(err) });
    }
  };

  const filter = (set: (v: string) => void) => (e: Event) => { set((e.target as HTMLInputElement).value); setCursors(FIRST_PAGE); };

  return (
    <section aria-labelledby="tokens-title">
      <h1 id="tokens-title">Tokens</h1>
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <div><label for="token-user">User</label><input id="token-user" data-testid="token-user" value={user} onInput={filter(setUser)} /></div>
        <div><label for="token-prefix">Name starts with</label><input id="token-prefix" data-testid="token-prefix" type="search" value={prefix} onInput={filter(setPrefix)} /></div>
      </form>
      {list.error && <p role="alert" class="error">{list.error}</p>}
      {message && <p role={message.kind === "error" ? "alert" : "status"} class={message.kind} data-testid="token-message">{message.text}</p>}
      <div class="table-wrap">
        <table data-testid="tokens">
          <caption class="sr-only">Tokens, their users and what they spent, in {CURRENCY}</caption>
          <thead><tr><th scope="col">Token</th><th scope="col">User</th><th scope="col">Group</th><th scope="col">Status</th><th scope="col">Key</th><th scope="col">Spent</th><th scope="col">Quota</th><th scope="col">Expires</th><th scope="col">Actions</th></tr></thead>
          <tbody>
            {rows.map((t) => (
              <tr key={t.name} data-testid="token-row" data-token={t.name} data-status={t.status}>
                <th scope="row">{t.name}</th><td>{t.user}</td><td>{t.group}</td><td>{t.status}</td>
                <td><code>{t.key_hint ?? "—"}</code></td>
                <td>{t.spent === undefined ? "—" : <Money amount={t.spent} currency={CURRENCY} />}</td>
                <td>{t.quota === undefined ? "—" : <Money amount={t.quota} currency={CURRENCY} />}</td>
                <td>{t.expires === undefined ? "—" : formatTime(msOf(t.expires) ?? 0)}</td>
                <td class="actions">
                  {t.source === "store" && t.status !== "revoked" && (
                    <>
                      {t.status === "active"
                        ? <button type="button" aria-label={`Disable ${t.name}`} onClick={() => act(t, "PATCH", { status: "disabled" })}>Disable</button>
                        : <button type="button" aria-label={`Enable ${t.name}`} onClick={() => act(t, "PATCH", { status: "active" })}>Enable</button>}
                      {confirming === t.name
                        ? <>
                            <button type="button" class="danger" aria-label={`Confirm: revoke ${t.name} for good`} onClick={() => act(t, "DELETE")}>Revoke for good</button>
                            <button type="button" aria-label={`Keep ${t.name}`} onClick={() => setConfirming(undefined)}>Keep</button>
                          </>
                        : <button type="button" class="danger" aria-label={`Revoke ${t.name}`} onClick={() => setConfirming(t.name)}>Revoke…</button>}
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {rows.length === 0 && !list.error && !list.loading && <p>No tokens match.</p>}
      <Pager label="tokens" cursors={cursors} next={list.data?.next} onMove={setCursors} />
    </section>
  );
}
