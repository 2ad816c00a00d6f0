// Tokens: the customer's user's tokens (hints, never keys). When the operator allows it
// (console.customer_tokens), a new token (its key shown once), a quota or expiry set, and a
// revocation after a confirmation; otherwise a sentence saying the operator manages them.
import { useEffect, useState } from "preact/hooks";
import { ApiError, call, type Session } from "../../api.js";
import { formatTime, zoneNote } from "../../time.js";
import { CopyButton } from "./copy-button.js";

/** A token as GET /console/api/me/tokens lists it. */
interface TokenRow {
  readonly name: string;
  readonly source: "store" | "gateway.yaml";
  readonly status: "active" | "disabled" | "revoked";
  readonly key_hint?: string;
  readonly expires?: string;
  readonly quota?: string;
  readonly spent?: string;
  readonly current?: true;
}

interface TokenList {
  readonly data: readonly TokenRow[];
  readonly next?: string;
  readonly customer_tokens: boolean;
}

const messageOf = (err: unknown): string => (err instanceof ApiError ? err.message : "The gateway could not be reached.");

export function Tokens({ session, currency }: { session: Session; currency: string }) {
  const [list, setList] = useState<TokenList>();
  const [error, setError] = useState<string>();
  const [reloads, setReloads] = useState(0);
  useEffect(() => {
    call<TokenList>("GET", "/console/api/me/tokens").then((l) => { setList(l); setError(undefined); }, (err) => setError(messageOf(err)));
  }, [reloads]);
  const reload = () => setReloads((n) => n + 1);
  if (!list) return error ? <p role="alert" class="error">{error}</p> : <p aria-busy="true">Loading…</p>;
  const changeable = list.customer_tokens;
  return (
    <section aria-labelledby="tokens-title">
      <h1 id="tokens-title">Tokens</h1>
      {error && <p role="alert" class="error">{error}</p>}
      {!changeable && <p data-testid="tokens-operator">Your operator manages your tokens: ask them to create, change or revoke one.</p>}
      <div class="table-wrap">
        <table data-testid="tokens">
          <caption class="sr-only">Your tokens</caption>
          <thead><tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Status</th><th scope="col">Quota ({currency})</th>
            <th scope="col">Spent ({currency})</th><th scope="col">Expires</th></tr></thead>
          <tbody>
            {list.data.map((t) => (
              <tr key={t.name} data-token={t.name}>
                <th scope="row">{t.name}{t.current && <span class="tag"> (this session)</span>}</th>
                <td>{t.key_hint ? <code>{t.key_hint}</code> : "—"}</td>
                <td>{t.status}</td>
                <td>{t.quota ?? "none"}</td>
                <td>{t.spent ?? "—"}</td>
                <td>{t.expires ? formatTime(Date.parse(t.expires)) : "never"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p class="hint">{zoneNote()}</p>
      {changeable && <NewToken session={session} onMade={reload} />}
      {changeable && <ChangeToken session={session} tokens={list.data.filter((t) => t.source === "store" && t.status !== "revoked")} onChanged={reload} />}
    </section>
  );
}

function NewToken({ session, onMade }: { session: Session; onMade: () => void }) {
  const [name, setName] = useState("");
  const [quota, setQuota] = useState("");
  const [made, setMade] = useState<{ name: string; key: string }>();
  const [error, setError] = useState<string>();
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setMade(undefined);
    try {
      const body: Record<string, string> = { name: name.trim() };
      if (quota.trim() !== "") body.quota = quota.trim();
      const answer = await call<{ name: string; key: string }>("POST", "/console/api/me/tokens", { csrf: session.csrf, body });
      setMade({ name: answer.name, key: answer.key });
      setName("");
      setQuota("");
      onMade();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <section aria-labelledby="new-token-title">
      <h2 id="new-token-title">New token</h2>
      <form class="topup" onSubmit={submit}>
        <label for="new-token-name">Token name</label>
        <input id="new-token-name" data-testid="token-name" autocomplete="off" required value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        <label for="new-token-quota">Quota (optional, exact amount)</label>
        <input id="new-token-quota" inputMode="decimal" autocomplete="off" value={quota} onInput={(e) => setQuota((e.target as HTMLInputElement).value)} />
        <button type="submit" data-testid="token-create">Create token</button>
      </form>
      {error && <p role="alert" class="error">{error}</p>}
      {made && (
        <div role="status" class="once">
          <p>Token <strong>{made.name}</strong> created. <strong>Copy its key now: it is shown this once</strong> and the gateway keeps only its hash.</p>
          <p><code class="secret" data-testid="token-key">{made.key}</code> <CopyButton text={made.key} label={`Copy the key of ${made.name}`} testid="token-copy" /></p>
        </div>
      )}
    </section>
  );
}

function ChangeToken({ session, tokens, onChanged }: { session: Session; tokens: readonly TokenRow[]; onChanged: () => void }) {
  const [name, setName] = useState("");
  const [quota, setQuota] = useState("");
  const [expires, setExpires] = useState("");
  const [confirming, setConfirming] = useState(false);
  const [said, setSaid] = useState<string>();
  const [error, setError] = useState<string>();
  const chosen = tokens.find((t) => t.name === name);
  if (tokens.length === 0) return null;

  /** Runs a change; whether it was made. */
  const act = async (what: () => Promise<unknown>, done: string): Promise<boolean> => {
    setError(undefined);
    setSaid(undefined);
    try {
      await what();
      setSaid(done);
      onChanged();
      return true;
    } catch (err) {
      setError(messageOf(err));
      return false;
    }
  };
  const path = () => `/console/api/me/tokens/${encodeURIComponent(name)}`;
  const save = (e: Event) => {
    e.preventDefault();
    const body: Record<string, string | null> = {};
    if (quota.trim() !== "") body.quota = quota.trim() === "none" ? null : quota.trim();
    if (expires.trim() !== "") body.expires = expires.trim() === "never" ? null : expires.trim();
    if (Object.keys(body).length === 0) { setError("Enter a quota or an expiry to set."); return; }
    void act(() => call("PATCH", path(), { csrf: session.csrf, body }), `Token ${name} changed.`);
  };
  const revoke = async () => {
    if (await act(() => call("DELETE", path(), { csrf: session.csrf }), `Token ${name} revoked.`)) setName("");
    setConfirming(false);
  };

  return (
    <section aria-labelledby="change-token-title">
      <h2 id="change-token-title">Change a token</h2>
      <form class="topup" onSubmit={save}>
        <label for="change-token-name">Token</label>
        <select id="change-token-name" data-testid="token-choose" value={name} onChange={(e) => { setName((e.target as HTMLSelectElement).value); setConfirming(false); }}>
          <option value="">Choose a token</option>
          {tokens.map((t) => <option key={t.name} value={t.name}>{t.name}</option>)}
        </select>
        <label for="change-token-quota">New quota (an exact amount, or “none”)</label>
        <input id="change-token-quota" data-testid="token-quota" autocomplete="off" value={quota} disabled={!chosen} onInput={(e) => setQuota((e.target as HTMLInputElement).value)} />
        <label for="change-token-expires">New expiry (a date such as 2027-01-31, a span such as 30d, or “never”)</label>
        <input id="change-token-expires" data-testid="token-expires" autocomplete="off" value={expires} disabled={!chosen} onInput={(e) => setExpires((e.target as HTMLInputElement).value)} />
        <button type="submit" data-testid="token-save" disabled={!chosen}>Save</button>
      </form>
      {chosen && !chosen.current && (
        confirming ? (
          <div role="group" aria-label="Confirm the revocation" class="confirm">
            <p>Revoke <strong>{chosen.name}</strong>? Requests with its key will be refused from now on; this cannot be undone.</p>
            <button type="button" data-testid="token-revoke-confirm" onClick={revoke}>Yes, revoke {chosen.name}</button>{" "}
            <button type="button" onClick={() => setConfirming(false)}>Keep it</button>
          </div>
        ) : (
          <p><button type="button" data-testid="token-revoke" onClick={() => setConfirming(true)}>Revoke {chosen.name}…</button></p>
        )
      )}
      {error && <p role="alert" class="error">{error}</p>}
      {said && <p role="status" class="done">{said}</p>}
    </section>
  );
}
