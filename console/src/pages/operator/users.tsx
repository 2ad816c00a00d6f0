// Users: searched by name prefix and paged on the server (prefix/after/limit), each with its
// money, disabled or enabled in place; the chosen one's detail, top-up and a new token.
import { useState } from "preact/hooks";
import { call, type Session } from "../../api.js";
import { Money } from "../money.js";
import { TokenForm } from "../token-form.js";
import { TopUpForm } from "../topup.js";
import { FIRST_PAGE, currentCursor, listPath, type Cursors } from "./logic.js";
import { CURRENCY, type ListPage } from "./list.js";
import { Pager } from "./pager.js";
import { adminPath, messageOf, useAdmin } from "./use-admin.js";
import { UserDetail } from "./user-detail.js";

/** A user as the admin API lists it (money as exact decimals). */
export interface UserRow {
  readonly name: string;
  readonly source: "store" | "gateway.yaml";
  readonly status: string;
  readonly plan?: string;
  readonly groups: readonly string[];
  readonly credit: string;
  readonly balance: string;
  readonly reserved?: string;
  readonly spent: string;
  readonly version?: number;
}

const PAGE = 20;

export function UsersPage({ session }: { session: Session }) {
  const [prefix, setPrefix] = useState("");
  const [cursors, setCursors] = useState<Cursors>(FIRST_PAGE);
  const [chosen, setChosen] = useState<string>();
  const [reloads, setReloads] = useState(0);
  const [actionError, setActionError] = useState<string>();
  const list = useAdmin<ListPage<UserRow>>(listPath("users", { prefix }, PAGE, "after", currentCursor(cursors)), reloads);
  const rows = list.data?.data ?? [];
  const reload = () => setReloads((n) => n + 1);

  const setStatus = async (u: UserRow, status: "active" | "disabled") => {
    setActionError(undefined);
    try {
      await call("PATCH", adminPath(`users/${encodeURIComponent(u.name)}`), { csrf: session.csrf, body: { status } });
      reload();
    } catch (err) {
      setActionError(messageOf(err));
    }
  };

  return (
    <>
      <section aria-labelledby="users-title">
        <h1 id="users-title">Users</h1>
        <form class="search" role="search" onSubmit={(e) => e.preventDefault()}>
          <label for="user-search">Name starts with</label>
          <input id="user-search" data-testid="user-search" type="search" value={prefix}
            onInput={(e) => { setPrefix((e.target as HTMLInputElement).value); setCursors(FIRST_PAGE); }} />
        </form>
        {list.error && <p role="alert" class="error">{list.error}</p>}
        {actionError && <p role="alert" class="error" data-testid="user-action-error">{actionError}</p>}
        <div class="table-wrap">
          <table data-testid="users">
            <caption class="sr-only">Users and their money, in {CURRENCY}</caption>
            <thead><tr><th scope="col">User</th><th scope="col">Status</th><th scope="col">Balance</th><th scope="col">Reserved</th><th scope="col">Spent</th><th scope="col">Plan</th><th scope="col">Actions</th></tr></thead>
            <tbody>
              {rows.map((u) => (
                <tr key={u.name} data-testid="user-row" data-user={u.name} data-status={u.status} class={u.name === chosen ? "chosen" : undefined}>
                  <th scope="row">{u.name}</th>
                  <td>{u.status}</td>
                  <td><Money amount={u.balance} currency={CURRENCY} /></td>
                  <td>{u.reserved === undefined ? "—" : <Money amount={u.reserved} currency={CURRENCY} />}</td>
                  <td><Money amount={u.spent} currency={CURRENCY} /></td>
                  <td>{u.plan ?? "—"}</td>
                  <td class="actions">
                    <button type="button" data-testid="user-choose" aria-label={`Choose ${u.name}`} onClick={() => setChosen(u.name)}>Choose</button>
                    {u.source === "store" && (u.status === "disabled"
                      ? <button type="button" data-testid="user-enable" aria-label={`Enable ${u.name}`} onClick={() => setStatus(u, "active")}>Enable</button>
                      : <button type="button" data-testid="user-disable" aria-label={`Disable ${u.name}`} class="danger" onClick={() => setStatus(u, "disabled")}>Disable</button>)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {rows.length === 0 && !list.error && !list.loading && <p>No users{prefix ? ` whose name starts with “${prefix}”` : ""}.</p>}
        <Pager label="users" cursors={cursors} next={list.data?.next} onMove={setCursors} />
      </section>
      {chosen && <UserDetail session={session} user={chosen} reload={reloads} onChanged={reload} />}
      <TopUpForm session={session} user={chosen} currency={CURRENCY} onDone={reload} />
      <TokenForm session={session} user={chosen} />
    </>
  );
}
