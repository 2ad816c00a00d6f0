// The quick start's snippets: the server writes them with a placeholder for the base URL;
// the page fills in its own origin, so what a customer copies calls the gateway they see.

/** `text` with every `placeholder` replaced by `origin` (its trailing slashes dropped). */
export function fillBaseUrl(text: string, placeholder: string, origin: string): string {
  if (placeholder === "") return text;
  const base = origin.replace(/\/+$/, "");
  return text.split(placeholder).join(base);
}
