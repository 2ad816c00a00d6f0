// The console's built front-end (console/build, written by scripts/build-console.mjs at
// install): its manifest, the hashed assets held in memory, and the index page that names
// them. Only names the manifest lists are ever served, so no request path reaches the disk.

import { existsSync, readFileSync } from "node:fs";
import { errorText, log } from "../../observability/log.js";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** One asset, ready to send. */
export interface Asset {
  readonly body: Buffer;
  readonly contentType: string;
}

/** What a build gives the server: the index page and the assets by hashed file name. */
export interface ConsoleBuild {
  readonly index: string;
  readonly assets: ReadonlyMap<string, Asset>;
}

/** The build's folder: console/build at the package root (the same from src/ and dist/). */
export const defaultBuildDir = fileURLToPath(new URL("../../../console/build", import.meta.url));

const contentTypes: Readonly<Record<string, string>> = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
  png: "image/png",
  woff2: "font/woff2",
};

/** A file name as the build writes it: name, hash, extension; nothing that could climb out. */
const ASSET_NAME = /^[A-Za-z0-9_-]+\.[A-Za-z0-9]+\.[a-z0-9]+$/;

/** How often a missing build is looked for again (it may be built while the gateway runs). */
const RETRY_MS = 1000;

/** The build, loaded once it exists. */
export class ConsoleAssets {
  readonly #dir: string;
  #build: ConsoleBuild | undefined;
  #lookedAt = 0;

  constructor(dir: string = defaultBuildDir) {
    this.#dir = dir;
  }

  /** The build, or undefined while there is none (the console answers 503). */
  current(now: number = Date.now()): ConsoleBuild | undefined {
    if (this.#build || now - this.#lookedAt < RETRY_MS) return this.#build;
    this.#lookedAt = now;
    try {
      this.#build = loadBuild(this.#dir);
    } catch (err) {
      // A broken or half-copied build: answered as not built, and looked for again.
      log.warn("the console's build cannot be read", { error: errorText(err) });
    }
    return this.#build;
  }
}

/** Reads the manifest and every asset it lists; undefined when there is no build. */
export function loadBuild(dir: string): ConsoleBuild | undefined {
  const manifestPath = join(dir, "manifest.json");
  if (!existsSync(manifestPath)) return undefined;
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as { files?: Record<string, string> };
  const files = manifest.files ?? {};
  const assets = new Map<string, Asset>();
  for (const name of Object.values(files)) {
    if (!ASSET_NAME.test(name)) throw new Error(`console/build/manifest.json names '${name}', which is not a built asset's name`);
    const ext = name.slice(name.lastIndexOf(".") + 1);
    assets.set(name, { body: readFileSync(join(dir, "assets", name)), contentType: contentTypes[ext] ?? "application/octet-stream" });
  }
  if (!files["main.js"] || !files["style.css"]) throw new Error("console/build/manifest.json lacks main.js or style.css: run npm run build:console");
  return { index: indexPage(files["main.js"], files["style.css"]), assets };
}

/** The one HTML page: the app mounts into #app; scripts and styles by hashed name only (the
 * CSP allows nothing inline). The icon is an empty data: URL, so no request goes for one. */
function indexPage(script: string, style: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Gateway console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/console/assets/${style}">
<script type="module" src="/console/assets/${script}"></script>
</head>
<body>
<div id="app"><noscript>The console needs JavaScript.</noscript></div>
</body>
</html>
`;
}

/** The page served while there is no build. */
export const notBuiltPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Console not built</title></head>
<body><h1>The console is not built</h1>
<p>Its front-end is built at install (<code>npm ci</code>). Build it now with <code>npm run build:console</code> in the gateway's folder; no restart is needed.</p>
</body></html>
`;
