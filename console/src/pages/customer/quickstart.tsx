// Quick start: the base URL (this page's own origin) and, per wire protocol, the models the
// token can call there and the exact SDK snippet, its key read from an environment variable.
import { useEffect, useState } from "preact/hooks";
import { ApiError, call } from "../../api.js";
import { CopyButton } from "./copy-button.js";
import { fillBaseUrl } from "./snippets.js";

type Language = "curl" | "python" | "javascript";
const LANGUAGES: readonly { id: Language; label: string }[] = [
  { id: "python", label: "Python" }, { id: "javascript", label: "JavaScript" }, { id: "curl", label: "curl" },
];

/** GET /console/api/me/quickstart. */
interface Guide {
  readonly group: string;
  readonly base_url_placeholder: string;
  readonly key_variable: string;
  readonly models: readonly string[];
  readonly protocols: readonly {
    readonly protocol: string;
    readonly models: readonly string[];
    readonly example_model?: string;
    readonly path?: string;
    readonly snippets?: Readonly<Record<Language, string>>;
  }[];
}

export function QuickStart() {
  const [guide, setGuide] = useState<Guide>();
  const [error, setError] = useState<string>();
  const [language, setLanguage] = useState<Language>("python");
  useEffect(() => {
    call<Guide>("GET", "/console/api/me/quickstart").then(setGuide,
      (err: Error) => setError(err instanceof ApiError ? err.message : "The gateway could not be reached."));
  }, []);
  if (error) return <p role="alert" class="error">{error}</p>;
  if (!guide) return <p aria-busy="true">Loading…</p>;
  const origin = location.origin;
  return (
    <section aria-labelledby="quickstart-title">
      <h1 id="quickstart-title">Quick start</h1>
      <p>Base URL: <code data-testid="base-url">{origin}</code> <CopyButton text={origin} label="Copy the base URL" /></p>
      <p>Put one of your tokens in the <code>{guide.key_variable}</code> environment variable; the snippets read it from there.</p>
      <p>Models your token can call (group {guide.group}): {guide.models.length === 0 ? "none yet: ask your operator." : guide.models.join(", ")}.</p>
      <label for="snippet-language">Language of the snippets</label>
      <select id="snippet-language" data-testid="snippet-language" value={language} onChange={(e) => setLanguage((e.target as HTMLSelectElement).value as Language)}>
        {LANGUAGES.map((l) => <option key={l.id} value={l.id}>{l.label}</option>)}
      </select>
      {guide.protocols.map((p) => (
        <section key={p.protocol} aria-labelledby={`qs-${p.protocol}`} data-protocol={p.protocol} class="guide">
          <h2 id={`qs-${p.protocol}`}>{p.protocol}{p.path ? <> <code class="hint">{p.path}</code></> : null}</h2>
          {p.snippets ? (
            <>
              <p>Models: {p.models.join(", ")}.</p>
              <pre tabIndex={0} aria-label={`${p.protocol} snippet`}><code data-testid={`snippet-${p.protocol}`}>{fillBaseUrl(p.snippets[language], guide.base_url_placeholder, origin)}</code></pre>
              <CopyButton text={fillBaseUrl(p.snippets[language], guide.base_url_placeholder, origin)} label={`Copy the ${p.protocol} snippet`} />
            </>
          ) : <p>No model of yours is served on this protocol.</p>}
        </section>
      ))}
    </section>
  );
}
