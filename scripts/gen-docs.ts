// `npm run docs`: regenerates docs/configuration.md (from the gateway.yaml JSON Schema),
// docs/pricing.md (from the schema's price keys and the pricing code, which computes its
// worked examples), docs/errors.md (from the error catalogue), docs/conversion.md (from the
// field table) and docs/clients.md with the fixtures README's table of clients (from the
// recorded client fixtures and their clients.json). `--check` writes nothing and exits 1 when a
// committed file differs; test/unit/docs-generated.test.ts does the same check.

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { gatewaySchemaPath } from "../src/config/schema.js";
import { errorAdvice } from "../src/errors/advice.js";
import { renderClientMatrix, renderFixturesReadme } from "./docs/client-matrix.js";
import { renderConfigReference } from "./docs/config-reference.js";
import { renderConversionReference } from "./docs/conversion-reference.js";
import { renderErrorReference } from "./docs/error-reference.js";
import { renderPricing } from "./docs/pricing.js";
import type { SchemaNode } from "./docs/schema-tree.js";

/** The repository root, where the generated paths are relative to. */
export const repoRoot = fileURLToPath(new URL("..", import.meta.url));

/** Hand-written but for its table of clients, which is generated. */
const FIXTURES_README = "test/fixtures/clients/README.md";

/** One generated file: its path from the repository root and its full text. */
export interface GeneratedDoc {
  path: string;
  text: string;
}

/** Every generated document, rendered in memory from the current sources. */
export function generatedDocs(): GeneratedDoc[] {
  const schema = JSON.parse(readFileSync(gatewaySchemaPath, "utf8")) as SchemaNode;
  return [
    { path: "docs/configuration.md", text: renderConfigReference(schema) },
    { path: "docs/errors.md", text: renderErrorReference(errorAdvice) },
    { path: "docs/conversion.md", text: renderConversionReference() },
    { path: "docs/clients.md", text: renderClientMatrix() },
    { path: FIXTURES_README, text: renderFixturesReadme(readFileSync(join(repoRoot, FIXTURES_README), "utf8")) },
    { path: "docs/pricing.md", text: renderPricing(schema) },
  ];
}

/** The generated documents whose committed copy is missing or differs. */
export function staleDocs(root = repoRoot): string[] {
  return generatedDocs()
    .filter((doc) => {
      try {
        return readFileSync(join(root, doc.path), "utf8") !== doc.text;
      } catch {
        return true;
      }
    })
    .map((doc) => doc.path);
}

function main(args: string[]): number {
  if (args.includes("--check")) {
    const stale = staleDocs();
    for (const path of stale) process.stderr.write(`${path} is out of date: run npm run docs\n`);
    return stale.length ? 1 : 0;
  }
  for (const doc of generatedDocs()) {
    const target = join(repoRoot, doc.path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, doc.text);
    process.stdout.write(`wrote ${doc.path}\n`);
  }
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = main(process.argv.slice(2));
}
