// The query string of a generate-content call toward the provider. The gateway owns the
// wire shape there: streams always go as SSE (`alt=sse`), and nothing the client puts in
// the query may hide usage from the tap (`fields=`), change the answer's framing (`alt`,
// `callback`) or carry a credential (`key`). (The pass-through route has already kept only
// the allow-listed `alt=sse` of the client's query: upstream/query.ts.)

/** Google's system parameters the gateway sets or withholds; Google also reads them with a
 * `$` prefix (`$fields`), and names are compared without case and percent-decoded. */
const withheld = new Set(["alt", "fields", "callback", "key"]);

function isWithheld(name: string): boolean {
  return withheld.has((name.startsWith("$") ? name.slice(1) : name).toLowerCase());
}

/** The upstream query (without "?") for a generate-content call: the client's parameters
 * but the withheld ones, plus `alt=sse` for a stream. */
export function generateQuery(clientQuery: string, stream: boolean): string {
  const out = new URLSearchParams();
  if (clientQuery !== "") {
    for (const [name, value] of new URLSearchParams(clientQuery)) if (!isWithheld(name)) out.append(name, value);
  }
  if (stream) out.append("alt", "sse");
  return out.toString();
}

/** Whether a stream's client asked for SSE (`alt=sse`); without it Google answers one JSON
 * array, which the gateway renders from the SSE it asked for. The last `alt` counts. */
export function clientWantsSse(clientQuery: string): boolean {
  let alt: string | undefined;
  if (clientQuery !== "") {
    for (const [name, value] of new URLSearchParams(clientQuery)) {
      if ((name.startsWith("$") ? name.slice(1) : name).toLowerCase() === "alt") alt = value;
    }
  }
  return alt?.toLowerCase() === "sse";
}
