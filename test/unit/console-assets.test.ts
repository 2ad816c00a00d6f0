// The console's build as the server reads it: the index page names the manifest's hashed
// files, each asset has its content type, a manifest naming anything but a built asset's
// name is not served at all, and a build made while the gateway runs is found.

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { ConsoleAssets, loadBuild } from "../../src/admin/console/assets.js";

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function build(files: Record<string, string>, write: readonly string[] = Object.values(files)): string {
  const dir = mkdtempSync(join(tmpdir(), "console-build-"));
  dirs.push(dir);
  mkdirSync(join(dir, "assets"));
  for (const name of write) writeFileSync(join(dir, "assets", name), `/* ${name} */`);
  writeFileSync(join(dir, "manifest.json"), JSON.stringify({ files }));
  return dir;
}

test("the index names the hashed files; assets carry their content types", () => {
  const loaded = loadBuild(build({ "main.js": "main.ABC123.js", "style.css": "style.DEF456.css" }))!;
  assert.match(loaded.index, /<script type="module" src="\/console\/assets\/main\.ABC123\.js"><\/script>/);
  assert.match(loaded.index, /<link rel="stylesheet" href="\/console\/assets\/style\.DEF456\.css">/);
  assert.equal(loaded.assets.get("main.ABC123.js")?.contentType, "text/javascript; charset=utf-8");
  assert.equal(loaded.assets.get("style.DEF456.css")?.contentType, "text/css; charset=utf-8");
  assert.equal(loaded.assets.get("main.ABC123.js")?.body.toString(), "/* main.ABC123.js */");
  assert.deepEqual([...loaded.assets.keys()].sort(), ["main.ABC123.js", "style.DEF456.css"]);
});

test("a manifest naming a path instead of a built asset is refused whole", () => {
  for (const bad of ["../../package.json", "sub/main.A.js", "main.js", ".hidden.A.js"]) {
    assert.throws(() => loadBuild(build({ "main.js": bad, "style.css": "style.DEF456.css" }, ["style.DEF456.css"])), /not a built asset's name/, bad);
    assert.equal(new ConsoleAssets(build({ "main.js": bad, "style.css": "style.DEF456.css" }, ["style.DEF456.css"])).current(), undefined, bad);
  }
});

test("no build: nothing served; a build made later is found within the retry time", () => {
  const dir = join(mkdtempSync(join(tmpdir(), "console-later-")), "build");
  dirs.push(dir);
  const assets = new ConsoleAssets(dir);
  assert.equal(assets.current(10_000), undefined);
  mkdirSync(join(dir, "assets"), { recursive: true });
  writeFileSync(join(dir, "assets", "main.A1.js"), "");
  writeFileSync(join(dir, "assets", "style.B2.css"), "");
  writeFileSync(join(dir, "manifest.json"), JSON.stringify({ files: { "main.js": "main.A1.js", "style.css": "style.B2.css" } }));
  assert.equal(assets.current(10_500), undefined, "looked for again at most once a second");
  assert.ok(assets.current(11_000)?.assets.has("main.A1.js"));
});
