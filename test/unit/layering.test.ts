// Arrows point down: the folders of src/ import each other without a loop (docs/architecture.md
// gives the order). A loop is named with the imports that close it, so it can be undone.

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const src = resolve(dirname(fileURLToPath(import.meta.url)), "../../src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []);
}

/** The top folder of src/ a file lies in ("pipeline" for src/pipeline/stages/auth.ts). */
const folderOf = (file: string): string => relative(src, file).split("/")[0];

/** Folder → folder → one import that makes the arrow (file and specifier), for the message. */
function folderArrows(): Map<string, Map<string, string>> {
  const arrows = new Map<string, Map<string, string>>();
  for (const file of sourceFiles(src)) {
    const from = folderOf(file);
    for (const m of readFileSync(file, "utf8").matchAll(/^(?:import|export)\b[^;]*?from\s+"(\.[^"]+)"/gms)) {
      const to = folderOf(resolve(dirname(file), m[1]));
      if (to === from || to.startsWith("..")) continue;
      if (!arrows.has(from)) arrows.set(from, new Map());
      if (!arrows.get(from)!.has(to)) arrows.get(from)!.set(to, `${relative(src, file)} imports ${m[1]}`);
    }
  }
  return arrows;
}

/** A loop of folders (first folder repeated at the end), or undefined when there is none. */
function findLoop(arrows: Map<string, Map<string, string>>): string[] | undefined {
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (folder: string): string[] | undefined => {
    state.set(folder, "open");
    path.push(folder);
    for (const next of arrows.get(folder)?.keys() ?? []) {
      if (state.get(next) === "open") return [...path.slice(path.indexOf(next)), next];
      if (!state.has(next)) {
        const loop = visit(next);
        if (loop) return loop;
      }
    }
    path.pop();
    state.set(folder, "done");
    return undefined;
  };
  for (const folder of arrows.keys()) {
    if (state.has(folder)) continue;
    const loop = visit(folder);
    if (loop) return loop;
  }
  return undefined;
}

test("the folders of src/ import each other without a loop", () => {
  const arrows = folderArrows();
  assert.ok(arrows.get("server")?.has("pipeline"), "the scan finds imports (server imports pipeline)");
  const loop = findLoop(arrows);
  const why = loop?.slice(1).map((to, i) => arrows.get(loop[i])!.get(to)).join("; ");
  assert.equal(loop, undefined, `folder loop ${loop?.join(" → ")}: ${why}`);
});

test("the lower folders named in docs/architecture.md stay below", () => {
  const arrows = folderArrows();
  const never: [string, string][] = [
    ["pipeline", "server"], ["protocols", "billing"], ["runtime", "config"], ["runtime", "protocols"], ["upstream", "routing"],
  ];
  for (const [from, to] of never) assert.equal(arrows.get(from)?.get(to), undefined, `${from}/ must not import ${to}/`);
});
