// GET /console/api/me: the signed-in customer's token, user and group, and the user's
// money, exact decimals computed as `gateway users show` and the admin API compute them
// (AccountService.user), so the three can never disagree.

import type { AccountService } from "../../accounts/service.js";
import { meRoute } from "./me/route.js";
import type { Customer } from "./me/route.js";

/** The one currency amounts are in (the billing endpoints name it in `hard_limit_usd`). */
export const CURRENCY = "USD";

export interface CustomerOverview {
  readonly role: "customer";
  readonly token: string;
  readonly user: string;
  readonly group: string;
  readonly balance: string;
  readonly reserved: string;
  readonly spent: string;
  readonly currency: string;
}

/** The customer's overview; scoped to the session's token and its user, nothing the client sends. */
export async function customerOverview(customer: Customer, service: AccountService): Promise<CustomerOverview> {
  const user = await service.user(customer.user ?? "");
  return {
    role: "customer", token: customer.token, user: user.name, group: customer.group,
    balance: user.balance, reserved: user.reserved ?? "0", spent: user.spent, currency: CURRENCY,
  };
}

/** GET /console/api/me. */
export const overviewRoute = meRoute("GET", "", async ({ customer }, deps) => ({ status: 200, body: await customerOverview(customer, deps.service) }));
