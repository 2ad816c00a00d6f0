// Every relative link of README.md and docs/*.md reaches a file or folder of the repository
// (never a path outside it, like ../shared), and a link's #anchor names a heading of its
// target, slugged as GitHub does. Links inside code are not links; http(s) and mailto links
// are not followed.

import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(fileURLToPath(new URL("../..", import.meta.url)));
const documents = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];

/** The text outside fenced code blocks and inline code spans, line breaks kept. */
function prose(markdown: string): string {
  return markdown
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, (block) => block.replace(/[^\n]/g, " "))
    .replace(/(`+)[^`\n]*?\1/g, (span) => " ".repeat(span.length));
}

/** Link targets: inline `[text](target "title")` and reference definitions `[x]: target`. */
function linkTargets(markdown: string): string[] {
  const text = prose(markdown);
  const inline = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]);
  const references = [...text.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((m) => m[1]);
  return [...inline, ...references];
}

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to "-". */
function slug(heading: string): string {
  // HTML tags are dropped outside code spans only: `groups.<group>` keeps its "group".
  return heading
    .split(/(`[^`]*`)/)
    .map((part) => (part.startsWith("`") ? part.slice(1, -1) : part.replace(/<[^>]+>/g, "")))
    .join("")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** Every anchor of a Markdown file: its headings' slugs (repeats numbered) and explicit ids. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const text = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
  for (const m of text.matchAll(/^ {0,3}#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const m of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]);
  return anchors;
}

test("the link checker reads links and anchors as GitHub does", () => {
  assert.deepEqual(linkTargets("[a](docs/x.md) `[b](no.md)` [c](<y.md> \"t\")\n```\n[d](no.md)\n```\n[e]: z.md\n"), ["docs/x.md", "y.md", "z.md"]);
  assert.deepEqual([...anchorsOf("# Users, balances and quotas\n## `server.listen`\n## Tokens\n## Tokens\n### `groups.<group>.limits`\n")],
    ["users-balances-and-quotas", "serverlisten", "tokens", "tokens-1", "groupsgrouplimits"]);
});

for (const document of documents) {
  test(`${document}: every relative link resolves inside the repository`, () => {
    const markdown = readFileSync(join(root, document), "utf8");
    const problems: string[] = [];
    for (const target of linkTargets(markdown)) {
      if (/^(https?:|mailto:)/i.test(target)) continue;
      const [pathPart, anchor] = target.split("#", 2) as [string, string | undefined];
      const path = pathPart === "" ? join(root, document) : resolve(root, dirname(document), decodeURIComponent(pathPart));
      const inside = relative(root, path);
      if (inside.startsWith("..") || inside.startsWith(sep) || /^[a-z]+:/i.test(pathPart)) {
        problems.push(`${target}: outside the repository`);
        continue;
      }
      if (!existsSync(path)) {
        problems.push(`${target}: no such file`);
        continue;
      }
      if (anchor !== undefined && statSync(path).isFile() && path.endsWith(".md") && !anchorsOf(readFileSync(path, "utf8")).has(anchor)) {
        problems.push(`${target}: no heading #${anchor} in ${relative(root, path)}`);
      }
    }
    assert.deepEqual(problems, []);
  });
}

test("README.md and docs/*.md name no file outside the repository (../shared, SPEC.md, DESIGN.md)", () => {
  for (const document of documents) {
    const text = readFileSync(join(root, document), "utf8");
    assert.doesNotMatch(text, /\.\.\/shared|\bSPEC\.md\b|\bDESIGN\.md\b|\bSTYLE\.md\b|\/work\//, document);
  }
});
