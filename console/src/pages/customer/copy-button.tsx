// A button that copies a text (a key, a snippet) and says so; where the browser refuses the
// clipboard, it says that instead, and the text stays selectable by hand.
import { useState } from "preact/hooks";

export function CopyButton({ text, label, testid }: { text: string; label: string; testid?: string }) {
  const [said, setSaid] = useState<string>();
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setSaid("Copied.");
    } catch {
      setSaid("The browser did not allow copying: select the text and copy it by hand.");
    }
  };
  return (
    <span class="copy">
      <button type="button" data-testid={testid} aria-label={label} onClick={copy}>Copy</button>
      <span role="status" class="hint">{said ?? ""}</span>
    </span>
  );
}
