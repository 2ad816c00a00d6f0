// Builds the console's front-end (console/src, Preact in TSX) into hashed, minified assets
// under console/build/assets/ and a manifest the server reads to write its index page. Run
// at install (package.json `prepare`) and by tests when the build is missing: nothing is
// fetched at run time, and no CDN is involved.
import { mkdir, readdir, rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "console/build");
const assets = join(out, "assets");

/** Builds the console; resolves to the manifest written. A gateway (or a test) reading the
 * build meanwhile sees the old manifest or the new one, never half of one: the assets are
 * named by their content, the manifest is replaced in one rename, and only then are the
 * assets it no longer names removed. */
export async function buildConsole() {
  await mkdir(assets, { recursive: true });
  const result = await build({
    absWorkingDir: root,
    entryPoints: { main: "console/src/main.tsx", style: "console/src/style.css" },
    bundle: true,
    minify: true,
    format: "esm",
    target: ["es2020"],
    jsx: "automatic",
    jsxImportSource: "preact",
    outdir: assets,
    entryNames: "[name].[hash]",
    metafile: true,
    logLevel: "warning",
    legalComments: "none",
  });
  // Entry name → hashed file name, e.g. { "main.js": "main.3KQ2ZL7P.js" }.
  const files = {};
  for (const [path, meta] of Object.entries(result.metafile.outputs)) {
    if (!meta.entryPoint) continue;
    const name = basename(path);
    const logical = name.replace(/\.[A-Z0-9]+\.(js|css)$/, ".$1");
    files[logical] = name;
  }
  const manifest = { builtAt: new Date().toISOString(), files };
  const temporary = join(out, `manifest.json.${process.pid}.tmp`);
  await writeFile(temporary, JSON.stringify(manifest, null, 2) + "\n");
  await rename(temporary, join(out, "manifest.json"));
  const kept = new Set([...Object.values(files), ...Object.values(files).map((f) => `${f}.map`)]);
  for (const name of await readdir(assets)) if (!kept.has(name)) await rm(join(assets, name), { force: true });
  return manifest;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const manifest = await buildConsole();
  console.log(`console built: ${Object.values(manifest.files).map((f) => relative(root, join(assets, f))).join(", ")}`);
}
