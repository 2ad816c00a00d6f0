// An operator's console: a navigation of sections (links, so Tab and Enter reach each, and
// the browser's back button works through the #hash) and the chosen section. Every call
// goes through /console/api/admin/…, the admin API under the signed-in admin key.
import { useEffect, useState } from "preact/hooks";
import type { Session } from "../api.js";
import { AuditPage } from "./operator/audit.js";
import { ChannelsPage } from "./operator/channels.js";
import { CodesPage } from "./operator/codes.js";
import { PricesPage } from "./operator/prices.js";
import { ReportsPage } from "./operator/reports.js";
import { TokensPage } from "./operator/tokens.js";
import { TrafficPage } from "./operator/traffic.js";
import { UsersPage } from "./operator/users.js";

export type { UserRow } from "./operator/users.js";

const SECTIONS = ["users", "tokens", "codes", "channels", "traffic", "reports", "prices", "audit"] as const;
type Section = (typeof SECTIONS)[number];
const TITLES: Record<Section, string> = {
  users: "Users", tokens: "Tokens", codes: "Codes", channels: "Channels", traffic: "Traffic", reports: "Reports", prices: "Prices", audit: "Audit",
};

function sectionOfHash(hash: string): Section {
  const name = hash.replace(/^#\/?/, "");
  return (SECTIONS as readonly string[]).includes(name) ? (name as Section) : "users";
}

export function OperatorPage({ session }: { session: Session }) {
  const [section, setSection] = useState<Section>(() => sectionOfHash(location.hash));
  useEffect(() => {
    const follow = () => setSection(sectionOfHash(location.hash));
    addEventListener("hashchange", follow);
    return () => removeEventListener("hashchange", follow);
  }, []);
  useEffect(() => { document.title = `${TITLES[section]} · Gateway console`; }, [section]);

  return (
    <>
      <nav class="sections" aria-label="Operator sections">
        <ul>
          {SECTIONS.map((s) => (
            <li key={s}><a href={`#/${s}`} data-testid={`nav-${s}`} aria-current={s === section ? "page" : undefined}>{TITLES[s]}</a></li>
          ))}
        </ul>
      </nav>
      {section === "users" && <UsersPage session={session} />}
      {section === "tokens" && <TokensPage session={session} />}
      {section === "codes" && <CodesPage session={session} />}
      {section === "channels" && <ChannelsPage session={session} />}
      {section === "traffic" && <TrafficPage />}
      {section === "reports" && <ReportsPage />}
      {section === "prices" && <PricesPage />}
      {section === "audit" && <AuditPage />}
    </>
  );
}
