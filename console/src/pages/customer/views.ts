// The customer's pages and their addresses: `#/usage` and so on, so the back button, a
// bookmark and a reload keep the page, and every link is a plain link.

export const CUSTOMER_VIEWS = [
  { id: "overview", label: "Overview" },
  { id: "usage", label: "Usage" },
  { id: "requests", label: "Requests" },
  { id: "tokens", label: "Tokens" },
  { id: "redeem", label: "Redeem" },
  { id: "quickstart", label: "Quick start" },
] as const;

export type CustomerView = (typeof CUSTOMER_VIEWS)[number]["id"];

/** The page a location hash names; the overview for anything else. */
export function viewOfHash(hash: string): CustomerView {
  const id = hash.replace(/^#\/?/, "");
  return CUSTOMER_VIEWS.find((v) => v.id === id)?.id ?? "overview";
}

/** The hash of a page. */
export const hashOf = (view: CustomerView): string => `#/${view}`;
