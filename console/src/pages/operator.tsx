// An operator's overview: the users, searched by name prefix and paged on the server
// (the admin API's prefix/after/limit), a top-up of the one chosen and a new token for them. Every call goes
// through /console/api/admin/…, the admin API under the signed-in admin key.
import { useEffect, useState } from "preact/hooks";
import { ApiError, call, type Session } from "../api.js";
import { Money } from "./money.js";
import { TokenForm } from "./token-form.js";
import { TopUpForm } from "./topup.js";

/** A user as the admin API lists it (money as exact decimals). */
export interface UserRow {
  readonly name: string;
  readonly status: string;
  readonly balance: string;
  readonly reserved?: string;
  readonly spent: string;
}

const PAGE = 20;
/** The admin API reports money in the gateway's one currency. */
const CURRENCY = "USD";

export function OperatorPage({ session }: { session: Session }) {
  const [prefix, setPrefix] = useState("");
  // The `after` of each page shown so far: the last is the current one's.
  const [pages, setPages] = useState<string[]>([""]);
  const [rows, setRows] = useState<readonly UserRow[]>([]);
  const [next, setNext] = useState<string>();
  const [chosen, setChosen] = useState<string>();
  const [error, setError] = useState<string>();
  const [reloads, setReloads] = useState(0);
  const after = pages[pages.length - 1];

  useEffect(() => {
    const q = new URLSearchParams({ limit: String(PAGE) });
    if (prefix) q.set("prefix", prefix);
    if (after) q.set("after", after);
    call<{ data: UserRow[]; next?: string }>("GET", `/console/api/admin/users?${q}`).then((page) => {
      setRows(page.data);
      setNext(page.next);
      setError(undefined);
    }, (err: Error) => setError(err instanceof ApiError ? err.message : "The gateway could not be reached."));
  }, [prefix, after, reloads]);

  return (
    <>
      <section aria-labelledby="users-title">
        <h1 id="users-title">Users</h1>
        <form class="search" role="search" onSubmit={(e) => e.preventDefault()}>
          <label for="user-search">Name starts with</label>
          <input id="user-search" data-testid="user-search" type="search" value={prefix}
            onInput={(e) => { setPrefix((e.target as HTMLInputElement).value); setPages([""]); }} />
        </form>
        {error && <p role="alert" class="error">{error}</p>}
        <div class="table-wrap">
          <table data-testid="users">
            <caption class="sr-only">Users and their money, in {CURRENCY}</caption>
            <thead><tr><th scope="col">User</th><th scope="col">Status</th><th scope="col">Balance</th><th scope="col">Reserved</th><th scope="col">Spent</th><th scope="col">Action</th></tr></thead>
            <tbody>
              {rows.map((u) => (
                <tr key={u.name} data-testid="user-row" data-user={u.name} class={u.name === chosen ? "chosen" : undefined}>
                  <th scope="row">{u.name}</th>
                  <td>{u.status}</td>
                  <td><Money amount={u.balance} currency={CURRENCY} /></td>
                  <td>{u.reserved === undefined ? "—" : <Money amount={u.reserved} currency={CURRENCY} />}</td>
                  <td><Money amount={u.spent} currency={CURRENCY} /></td>
                  <td><button type="button" data-testid="user-choose" aria-label={`Choose ${u.name}`} onClick={() => setChosen(u.name)}>Choose</button></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {rows.length === 0 && !error && <p>No users{prefix ? ` whose name starts with “${prefix}”` : ""}.</p>}
        <nav class="pager" aria-label="Pages of users">
          <button type="button" disabled={pages.length === 1} onClick={() => setPages(pages.slice(0, -1))}>Previous page</button>
          <button type="button" disabled={next === undefined} onClick={() => next !== undefined && setPages([...pages, next])}>Next page</button>
        </nav>
      </section>
      <TopUpForm session={session} user={chosen} currency={CURRENCY} onDone={() => setReloads(reloads + 1)} />
      <TokenForm session={session} user={chosen} />
    </>
  );
}
